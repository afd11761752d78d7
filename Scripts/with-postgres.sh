#!/usr/bin/env bash
# Usage: Scripts/with-postgres.sh CMD [ARG …]
#        Scripts/with-postgres.sh --detach ENVFILE
#
# Starts a throwaway PostgreSQL cluster on 127.0.0.1 and a free port, in a temporary directory, runs CMD with
# TETHER_POSTGRES_URL set to it, then stops the cluster and removes the directory — whatever CMD's outcome — and
# exits with CMD's status. When CMD fails, it first prints the server's lock waits, slow statements and fatal errors.
#
# With --detach, it starts the cluster, writes the three variables below to ENVFILE (NAME=value lines) and exits,
# leaving the cluster running: `$TETHER_POSTGRES_CTL destroy` stops it and removes it. For a test that needs a server
# of its own to stop and start (PrivatePostgresServer), without a long-lived child process.
#
# The server refuses to run as root, and these machines run as root: then the cluster belongs to the unprivileged
# `postgres` user (Debian's package creates it) and runs as that user. As another user, it runs as you.
#
# Also exported, for tests that restart the server or fence it off: TETHER_POSTGRES_DATA (the cluster's directory),
# TETHER_POSTGRES_CTL (a command that takes `stop`, `start` or `destroy` and does it to this cluster, as the right
# user).
#
# Needs Debian's postgresql package (`apt-get install -y postgresql`); its programs need not be on PATH.
set -euo pipefail

detach=""
if [ "${1:-}" = "--detach" ]; then
    [ $# -eq 2 ] || { echo "usage: $0 --detach ENVFILE" >&2; exit 64; }
    detach=$2
elif [ $# -eq 0 ]; then
    echo "usage: $0 CMD [ARG …] | --detach ENVFILE" >&2
    exit 64
fi

bin=""
if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    bin=$(dirname "$(command -v pg_ctl)")
else
    for candidate in /usr/lib/postgresql/*/bin; do
        [ -x "$candidate/pg_ctl" ] && bin=$candidate
    done
fi
if [ -z "$bin" ]; then
    echo "error: no PostgreSQL server found (initdb, pg_ctl); install it: apt-get install -y postgresql" >&2
    exit 69
fi

as_owner=()
owner=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
        echo "error: running as root, and there is no 'postgres' user to run the server as" >&2
        exit 69
    fi
    owner=postgres
    as_owner=(runuser -u postgres --)
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/tether-postgres.XXXXXX")
chmod 700 "$root"
[ "$owner" != "$(id -un)" ] && chown "$owner" "$root"
data="$root/data"
control="$root/ctl"

cleanup() {
    local status=$?
    # Detached and started: the cluster stays, for `ctl destroy`.
    [ -n "$detach" ] && [ "$status" -eq 0 ] && exit 0
    if [ -f "$data/postmaster.pid" ]; then
        "${as_owner[@]}" "$bin/pg_ctl" -D "$data" stop -m immediate >/dev/null 2>&1 || true
    fi
    rm -rf "$root"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A free port on loopback: the kernel picks one; the server binds it a moment later.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

"${as_owner[@]}" "$bin/initdb" -D "$data" -A trust -U tether -E UTF8 --locale=C.UTF-8 >"$root/initdb.log" 2>&1 || {
    cat "$root/initdb.log" >&2
    exit 70
}

# The command tests use to stop and start this very cluster (same port, same directory).
cat >"$control" <<EOF
#!/usr/bin/env bash
set -euo pipefail
case "\${1:-}" in
    stop) ${as_owner[*]} "$bin/pg_ctl" -D "$data" stop -m fast -w >/dev/null ;;
    start) ${as_owner[*]} "$bin/pg_ctl" -D "$data" -l "$root/server.log" start -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $root -c max_connections=200 \\
            -c log_lock_waits=on -c log_min_duration_statement=2000" >/dev/null ;;
    destroy)
        if [ -f "$data/postmaster.pid" ]; then
            ${as_owner[*]} "$bin/pg_ctl" -D "$data" stop -m immediate >/dev/null 2>&1 || true
        fi
        rm -rf "$root" ;;
    *) echo "usage: \$0 stop|start|destroy" >&2; exit 64 ;;
esac
EOF
chmod 755 "$control"
[ "$owner" != "$(id -un)" ] && chown "$owner" "$control"

bash "$control" start || {
    cat "$root/server.log" >&2 || true
    exit 70
}

export TETHER_POSTGRES_URL="postgres://tether@127.0.0.1:$port/postgres"
export TETHER_POSTGRES_DATA="$data"
export TETHER_POSTGRES_CTL="$control"
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') at $TETHER_POSTGRES_URL" >&2

if [ -n "$detach" ]; then
    env | grep '^TETHER_POSTGRES_' >"$detach.part"
    mv "$detach.part" "$detach"
    exit 0
fi

set +e
"$@"
status=$?
set -e
# A failed run says what the server saw that a test could not: lock waits past a second, statements slower than
# two seconds, fatal errors (the settings above log them).
if [ "$status" -ne 0 ] && [ -f "$root/server.log" ]; then
    echo "with-postgres: the command failed ($status); from the server's log (lock waits, slow statements, fatal errors):" >&2
    grep -E "still waiting for|acquired .*Lock|duration: |FATAL|PANIC" "$root/server.log" | tail -n 60 >&2 || echo "  (nothing)" >&2
fi
exit "$status"
