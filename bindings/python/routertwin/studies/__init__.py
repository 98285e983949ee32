"""Studies: one module per seed system. Each registers its calibration fit
with routertwin.validation.calibration.register_fit; `routertwin calibrate`
imports every module here."""
