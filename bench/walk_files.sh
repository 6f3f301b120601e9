#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# walk_files.sh - how many of sluice's source files one launch runs through
# on its way from POST /v1/launches to the REST body of its submit, and how
# often the request is parsed and serialised on that way (issue 30).
#
# Usage: bench/walk_files.sh SLUICE_BIN [SLUICE_BIN_BEFORE]
#        (WALK_KEEP=DIR keeps each run's callgrind output there)
#
# How it counts: the real `sluice serve` runs under valgrind's callgrind
# with collection switched on only inside the three entry points of the
# walk: launch_post() (the HTTP thread: body checks, the accept pipeline,
# the durable accept, the 201 view), launcher_intake_drain() (the launcher
# takes the launch), launcher_submit_due() (the marker commit, the answer's
# commit) and the threads it starts: stage_worker() (staging),
# chunk_post() and submit_worker() (the POST with its REST body).  One launch is POSTed
# to the local testbed (the default one: deploy/testbed/start.sh) and the
# service is stopped once the launch has its job id.  A file counts when
# one of its functions ran inside the walk (self cost > 0 in
# callgrind_annotate; without LTO nothing is inlined across files), among
# src/.  The parses and serialisations are the calls of jansson's
# json_loadb / json_dumps on the walk (the slurmrestd answer's parse and
# the REST body's serialisation included).  Both binaries, when two are
# given, are counted the same way in the same run.  Needs valgrind and a
# build with debug information (RelWithDebInfo).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
[ $# -ge 1 ] || {
    echo "usage: $0 SLUICE_BIN [SLUICE_BIN_BEFORE]" >&2
    exit 2
}
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || {
    echo "walk_files: valgrind is required (apt-get install valgrind)" >&2
    exit 2
}

work=$(mktemp -d /tmp/sluice-walk-XXXXXX)
serve_pid=""
cleanup() {
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

bash "$repo/deploy/testbed/site-config.sh" >"$work/site.yaml"
site=$(sed -n 's/^  name: *//p' "$work/site.yaml" | head -1)
tok="tok-walk-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'walker %s\n' "$tok" >"$work/tokens"
chmod 0600 "$work/tokens"

# walk BIN TAG: prints the files of the walk and the parse and serialise
# calls (walk_files.py), and leaves the file list in $work/TAG.files
walk() {
    local bin=$1 tag=$2 port="" id state code i
    local out="$work/$tag.cg"
    rm -rf "$work/state-$tag"
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=launch_post \
        --toggle-collect=launcher_intake_drain --toggle-collect=launcher_submit_due \
        --toggle-collect=stage_worker --toggle-collect=chunk_post --toggle-collect=submit_worker \
        --callgrind-out-file="$out" "$bin" serve --config "$work/site.yaml" \
        --state-dir "$work/state-$tag" --listen 127.0.0.1:0 --tokens "$work/tokens" \
        >"$work/$tag.log" 2>&1 &
    serve_pid=$!
    for i in $(seq 1 1200); do
        port=$(sed -n 's/.*listening on http:\/\/.*(port \([0-9]*\)).*/\1/p' "$work/$tag.log" | head -1)
        [ -n "$port" ] && break
        kill -0 "$serve_pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$port" ] || {
        cat "$work/$tag.log" >&2
        echo "walk_files: $tag: sluice serve did not start" >&2
        exit 1
    }
    id="walk-$tag-$$"
    code=$(curl -s -o "$work/$tag.post" -w '%{http_code}' -X POST \
        -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
        --data "{\"launch_id\": \"$id\", \"site\": \"$site\", \"profile\": \"none\", \"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": \"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}" \
        "http://127.0.0.1:$port/v1/launches") || code=000
    [ "$code" = 201 ] || {
        cat "$work/$tag.post" "$work/$tag.log" >&2
        echo "walk_files: $tag: POST answered $code" >&2
        exit 1
    }
    state=""
    for i in $(seq 1 600); do
        state=$(curl -s -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/v1/launches/$id" |
            python3 -c 'import json,sys; d=json.load(sys.stdin); print("yes" if d.get("job_ids") else d.get("state"))' 2>/dev/null || true)
        [ "$state" = yes ] && break
        sleep 0.2
    done
    [ "$state" = yes ] || {
        echo "walk_files: $tag: the launch got no job id (state $state)" >&2
        exit 1
    }
    kill -TERM "$serve_pid"
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
    curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $tok" \
        "http://127.0.0.1:$port/v1/launches/$id" 2>/dev/null || true
    python3 "$here/walk_files.py" "$out" "$work/$tag.files"
    # WALK_KEEP=DIR keeps callgrind's output (callgrind_annotate --tree=caller ...)
    [ -z "${WALK_KEEP:-}" ] || cp "$out" "$WALK_KEEP/$tag.callgrind"
}

echo "walk_files: one launch from POST /v1/launches to its REST body ($(date -u +%FT%TZ))"
echo "== after: $1"
walk "$1" after
if [ $# -ge 2 ]; then
    echo "== before: $2"
    walk "$2" before
    echo "== files on the walk: after $(wc -l <"$work/after.files"), before $(wc -l <"$work/before.files")"
fi
