#!/usr/bin/env bash
# Packaging acceptance: the wheel, installed (not editable) into a fresh venv beside PyPI's `validators`,
# runs the main job from a plain working folder, adds nothing but nr_run/napalm_sonic to site-packages,
# and refuses to deploy when a platform's policy file is gone.
# Usage: tests/packaging/acceptance.sh [PYTHON]   (run from anywhere; needs network or a pip index for deps)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
python="${1:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1
step() { printf '== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

step "build the wheel"
"$python" -m venv "$tmp/build-venv"
"$tmp/build-venv/bin/pip" install -q build >"$tmp/pip.log" 2>&1 || { tail -20 "$tmp/pip.log"; fail "pip install build"; }
"$tmp/build-venv/bin/python" -m build --wheel --outdir "$tmp/dist" "$repo" >"$tmp/build.log" 2>&1 \
  || { tail -20 "$tmp/build.log"; fail "wheel build"; }
wheel="$(ls "$tmp"/dist/nr_run-*.whl)"

step "fresh venv: PyPI validators + the wheel (not editable)"
cd "$tmp"      # from here on nothing may resolve from the repo (its validators/ folder, its egg-info)
"$python" -m venv "$tmp/venv"
pip="$tmp/venv/bin/pip"
py="$tmp/venv/bin/python"
"$pip" install -q validators "$wheel" >"$tmp/pip.log" 2>&1 || { tail -20 "$tmp/pip.log"; fail "pip install"; }
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

step "site-packages gains only nr_run, napalm_sonic and the nr_run dist-info"
# what the wheel itself installs (its RECORD), at the top level of site-packages
tops="$(unzip -Z1 "$wheel" | cut -d/ -f1 | sort -u | tr '\n' ' ')"
[ "$tops" = "napalm_sonic nr_run nr_run-0.1.0.dist-info " ] || fail "the wheel installs top-level: $tops"
owned="$("$py" - <<'PY'
from importlib.metadata import distribution
tops = {str(f).split("/")[0] for f in distribution("nr-run").files if not str(f).startswith("..")}
print(" ".join(sorted(tops)))
PY
)"
[ "$owned" = "napalm_sonic nr_run nr_run-0.1.0.dist-info" ] || fail "installed RECORD names: $owned"
"$py" -c 'import validators; assert validators.email("a@b.co"); assert not hasattr(validators, "checks")' \
  || fail "PyPI validators is shadowed"
"$py" -c 'import nr_run.validators.checks, nr_run.lab.twin.lab, nr_run.templates' || fail "mapped packages"

step "the main job from a working folder outside the repo"
work="$tmp/work"
mkdir -p "$work"
cp -r "$repo/inventory" "$work/inventory"
cd "$work"
export NR_RUN_LAB_STATE_DIR="$work/.nr-run/lab/dc1"
nr="$tmp/venv/bin/nr-run"
"$nr" render --site dc1 --out "$work/configs" >/dev/null || fail "render"
ls "$work/configs"/rtsw3.json >/dev/null || fail "render wrote no SONiC config"
"$nr" deploy --site dc1 --lab --commit --yes >"$tmp/deploy.log" 2>&1 || { tail -20 "$tmp/deploy.log"; fail "deploy"; }
"$nr" check --site dc1 --lab >"$tmp/check.log" 2>&1 || { tail -20 "$tmp/check.log"; fail "check"; }
[ -d "$site/nr_run/lab" ] && [ ! -e "$site/nr_run/lab/.state" ] || fail "the twin wrote state into site-packages"

step "a deleted policy file: deploy refuses (exit 3) and names it"
rm "$site/nr_run/templates/eos/policy.yaml"
set +e
"$nr" deploy --site dc1 --lab >"$tmp/nopolicy.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || { cat "$tmp/nopolicy.log"; fail "deploy without the EOS policy exited $rc, not 3"; }
grep -q "policy.yaml" "$tmp/nopolicy.log" || { cat "$tmp/nopolicy.log"; fail "the refusal does not name the policy"; }
step "packaging acceptance passed"
