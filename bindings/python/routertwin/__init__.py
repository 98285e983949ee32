"""RouterTwin: a discrete-event digital twin of routers, switches and load balancers."""

from routertwin._core import __version__

__all__ = ["__version__"]
