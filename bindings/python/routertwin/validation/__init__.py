"""The validation framework: reference figures (`reference`), which rows each
study replays (`mapping`), the replay and its report (`replay`, `plots`), and
calibration discipline (`calibration`, `lsq`). See docs/validation.md."""
