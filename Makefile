# The two commands of the README: `make demo` and `make test`.
# Both create .venv if needed, install the project into it, and run. Both are idempotent.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test venv bench train clean firmware

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall when the project description changes.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mjtable demo

# The Debian packages the tests need (Chromium and CJK fonts) are installed by tools/system-deps,
# which stops with one line saying what to install where it cannot.
test: $(STAMP)
	@sh tools/system-deps
	$(PY) -m pytest

# The Pico's firmware (firmware/rp2040 + firmware_bridge's device side, .mpy by mpy-cross, and
# pinmap.py from the profile's [mcu] section) into build/firmware; PROFILE=name or path.
PROFILE ?= default
firmware: $(STAMP)
	$(PY) -m firmware.build --profile $(PROFILE) --out build/firmware

bench: $(STAMP)
	$(PY) benchmarks/scoring_speed.py

# Train the vision models (vision/models/*.onnx + metrics.json) from ../shared/data/tiles, on the CPU:
# every member of the two ensembles (`python -m vision.train --list-members`), TRAIN_JOBS of them
# side by side (one thread each; 20-25 min per member here), then the detectors' calibration and the
# tile confidence's calibration and flag threshold (vision.fit_confidence, a few minutes).
# About 70 min on 2 cores; each process holds about 1 GB (TRAIN_JOBS=N to run fewer at once).
TRAIN_JOBS ?= $(shell nproc)
train: $(STAMP)
	$(PY) -m pip install --quiet -e '.[train]'
	$(PY) -m vision.train --list-members | xargs -P $(TRAIN_JOBS) -I{} $(PY) -m vision.train --member {}
	$(PY) -m vision.train --only calibrate
	$(PY) -m vision.fit_confidence

clean:
	rm -rf $(VENV) build *.egg-info
