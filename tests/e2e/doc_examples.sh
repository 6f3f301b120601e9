#!/usr/bin/env bash
# doc_examples.sh - every example command of the docs runs as written, on the
# testbed, so that README.md and docs/cli.md cannot drift from the binary.
#
# The `sluice ...` and `export SLUICE_...` lines of the ```sh blocks of
# README.md and docs/cli.md (a trailing `# comment` dropped) must be exactly
# the lines of RUNS below: a line the docs gain or lose fails the suite
# until this script knows how to run it.  Each line is run in the order of
# RUNS with these words replaced:
#   site.yaml             the testbed's site file (deploy/testbed/site-config.sh)
#   request.json          a one-node request that prints "doc-example"
#   LAUNCH_ID             that request's launch id
#   127.0.0.1:8750        127.0.0.1:<a free port>
#   --tokens tokens       a tokens file for the service (caller "doc")
#   tok, ~/.config/sluice/token   that caller's token file
#   /run/sluice/sluice.sock       a socket in the work directory
#   slurm.jwt             the testbed's Slurm token file
# with $SLUICE_STATE_DIR a store of the suite's own (never /var/lib/sluice).
# `sluice serve` runs in the background for the lines after it and must
# stop with 0 on SIGTERM.  A line passes when it exits as RUNS says (0 for
# all but none); a usage error (64) always fails.  Only loopback traffic.
# Last line: "doc_examples: <n> passed, <m> failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
NAME=doc_examples

# "FILE|line|exit": in the order they run (local first, then the service).
RUNS=(
    "README.md|sluice check --config site.yaml --probe-job|0"
    "README.md|sluice render request.json --config site.yaml|0"
    "README.md|sluice launch request.json --wait --config site.yaml|0"
    "README.md|sluice status LAUNCH_ID|0"
    "README.md|sluice ls --live|0"
    "README.md|sluice cancel LAUNCH_ID|0"
    "README.md|sluice config show --config site.yaml|0"
    "README.md|sluice token show slurm.jwt -o json|0"
    "README.md|sluice help launch|0"
    "docs/cli.md|sluice launch --help|0"
    "docs/cli.md|sluice status LAUNCH_ID --output=json|0"
    "docs/cli.md|sluice ls -o json --limit 5|0"
    "docs/cli.md|sluice -V|0"
    "README.md|sluice serve --config site.yaml --listen 127.0.0.1:8750 --tokens tokens --socket /run/sluice/sluice.sock|serve"
    "README.md|sluice status LAUNCH_ID --server http://127.0.0.1:8750 --api-token-file tok|0"
    "README.md|sluice probe --ready --server unix:/run/sluice/sluice.sock|0"
    "docs/cli.md|export SLUICE_SERVER=http://127.0.0.1:8750|export"
    "docs/cli.md|export SLUICE_API_TOKEN_FILE=~/.config/sluice/token|export"
    "docs/cli.md|sluice launch request.json --wait|0"
    "docs/cli.md|sluice launch request.json|0"
    "docs/cli.md|sluice status LAUNCH_ID|0"
    "docs/cli.md|sluice ls --state DONE --limit 20|0"
    "docs/cli.md|sluice logs -f LAUNCH_ID|0"
    "docs/cli.md|sluice cancel LAUNCH_ID|0"
)
TESTS=$((${#RUNS[@]} + 2))
# shellcheck source=lib/harness.sh
. "$HERE/lib/harness.sh"

# The example lines of the docs, as "FILE|line".
doc_lines() {
    local f
    for f in README.md docs/cli.md; do
        awk -v f="$f" '
            /^```/ { if (inblock) { inblock = 0 } else if ($0 ~ /^```sh[[:space:]]*$/) { inblock = 1 }; next }
            inblock && /^(sluice |export SLUICE_)/ {
                line = $0; sub(/[[:space:]]+#.*$/, "", line); sub(/[[:space:]]+$/, "", line)
                print f "|" line
            }' "$REPO/$f"
    done
}

e2e_launch_setup docs
serve_pid=
cleanup() {
    if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# ------------------------------------------------------------ the doc set
known=$(printf '%s\n' "${RUNS[@]}" | sed 's/|[^|]*$//' | sort)
found=$(doc_lines | sort)
if [ "$known" = "$found" ]; then
    pass "the docs' $(wc -l <<<"$found") example lines are the ones this suite runs"
else
    fail "the docs' example lines changed; teach tests/e2e/doc_examples.sh to run them:"
    diff <(echo "$known") <(echo "$found") | sed 's/^/    | /' >&2 || true
fi

# ------------------------------------------------------------ the inputs
id="doc-$run"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export SLUICE_STATE_DIR="$state"
unset SLUICE_SERVER SLUICE_API_TOKEN_FILE SLUICE_API_CA SLUICE_CONFIG
cat >"$work/request.json" <<JSON
{"launch_id": "$id", "site": "$SLUICE_TB_CLUSTER", "profile": "none",
 "command": "/bin/echo", "args": ["doc-example"], "time_limit": 5,
 "pools": [{"name": "main", "nodes": 1, "cpus_per_node": 1, "mem_per_node_mib": 200}]}
JSON
api_token="doc-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'doc %s\n' "$api_token" >"$work/tokens"
printf '%s\n' "$api_token" >"$work/tok"
chmod 0600 "$work/tokens" "$work/tok"

# The line as it runs here.
expand() {
    local c=$1
    c=${c//site.yaml/$site}
    c=${c//request.json/$work/request.json}
    c=${c//LAUNCH_ID/$id}
    c=${c//127.0.0.1:8750/127.0.0.1:$port}
    c=${c//--tokens tokens/--tokens $work/tokens}
    c=${c//\/run\/sluice\/sluice.sock/$work/sluice.sock}
    c=${c//--api-token-file tok/--api-token-file $work/tok}
    c=${c//\~\/.config\/sluice\/token/$work/tok}
    c=${c//slurm.jwt/$SLUICE_TB_TOKEN_FILE}
    printf '%s' "$c"
}

n=0
for entry in "${RUNS[@]}"; do
    n=$((n + 1))
    file=${entry%%|*}
    rest=${entry#*|}
    line=${rest%|*}
    want=${rest##*|}
    cmd=$(expand "$line")
    out="$work/run-$n.out"
    case "$want" in
        export)
            export "${cmd#export }"
            pass "$file: $line"
            continue
            ;;
        serve)
            read -ra words <<<"$cmd"
            words[0]=$SLUICE
            "${words[@]}" >"$out" 2>&1 &
            serve_pid=$!
            up=0
            for _ in $(seq 1 60); do
                if "$SLUICE" probe --server "unix:$work/sluice.sock" --timeout 2 >/dev/null 2>&1; then
                    up=1
                    break
                fi
                kill -0 "$serve_pid" 2>/dev/null || break
                sleep 0.5
            done
            if [ "$up" -eq 1 ]; then
                pass "$file: $line (up)"
            else
                fail "$file: $line: the service did not come up"
                sed 's/^/    | /' "$out" >&2
            fi
            continue
            ;;
    esac
    read -ra words <<<"$cmd"
    words[0]=$SLUICE
    rc=0
    timeout 300 "${words[@]}" >"$out" 2>&1 || rc=$?
    extra=ok
    case "$line" in
        "sluice logs -f LAUNCH_ID") grep -q '^doc-example$' "$out" || extra="no doc-example in the output" ;;
        "sluice launch request.json --wait"*) grep -q '] DONE .*result=SUCCEEDED(0)' "$out" || extra="no final DONE line" ;;
        "sluice help launch" | "sluice launch --help") grep -q '^usage: sluice launch ' "$out" || extra="no usage" ;;
        "sluice -V") grep -q '^sluice [0-9][0-9.]* (library [0-9][0-9.]*)$' "$out" || extra="no version line" ;;
    esac
    if [ "$rc" -eq "$want" ] && [ "$extra" = ok ]; then
        pass "$file: $line"
    else
        fail "$file: $line: exit $rc (want $want$([ "$rc" -eq 64 ] && echo ', a usage error')), $extra"
        sed 's/^/    | /' "$out" >&2
    fi
done

# ------------------------------------------------------------ serve stops
if [ -n "$serve_pid" ]; then
    kill -TERM "$serve_pid"
    src=0
    wait "$serve_pid" || src=$?
    serve_pid=
    if [ "$src" -eq 0 ]; then
        pass "sluice serve stopped with 0 on SIGTERM"
    else
        fail "sluice serve exited $src on SIGTERM"
    fi
else
    fail "sluice serve never ran"
fi

finish
