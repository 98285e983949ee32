from routertwin.cli import main

raise SystemExit(main())
