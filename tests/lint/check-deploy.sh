#!/usr/bin/env bash
# check-deploy.sh SRC_DIR - lint of deploy/: the Containerfile's runtime
# stage (runtime libraries only, no Slurm), YAML syntax of every file, the
# Kubernetes manifest's safety settings, the FORGE_* example against the
# seed, and that every example site file loads with `sluice config show`
# ($SLUICE_BIN).  The work is in check_deploy.py; Debian's python3 with
# python3-yaml (deploy/install-deps.sh) runs it: missing, it is a failure.
set -euo pipefail
src="${1:?usage: check-deploy.sh SRC_DIR}"
py=/usr/bin/python3
if ! "$py" -c 'import yaml' 2>/dev/null; then
    echo "check-deploy: $py with the yaml module is needed (deploy/install-deps.sh installs python3-yaml)" >&2
    exit 1
fi
exec "$py" "$(dirname "$0")/check_deploy.py" "$src"
