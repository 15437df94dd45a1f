from scheduler.cli import main

raise SystemExit(main())
