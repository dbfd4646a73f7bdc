# Sourced by the bench scripts: a private PostgreSQL server on a free loopback port in a
# temporary directory, as the tests start one (as root it runs as `postgres`, or `nobody`).
#
#   pg_start DIR      initdb in DIR/pg and start; sets PG_PORT (returns 1 without PostgreSQL)
#   pg_createdb NAME  creates a database; prints its URL
#   pg_psql ARGS...   psql as the superuser `chess` on database postgres
#   pg_stop           stops the server (immediate)
# PG_BIN: the server's bin directory (default the newest /usr/lib/postgresql/*/bin).

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}

pg_as() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u "$(id postgres >/dev/null 2>&1 && echo postgres || echo nobody)" -- "$@"
    else
        "$@"
    fi
}

pg_start() {
    PG_DIR=$1/pg
    [ -x "$PG_BIN/initdb" ] || { echo "no PostgreSQL found (apt-get install postgresql, or set PG_BIN)" >&2; return 1; }
    PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$PG_DIR"
    [ "$(id -u)" = 0 ] && chown -R "$(id postgres >/dev/null 2>&1 && echo postgres || echo nobody)" "$1"
    pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U chess --auth=trust -E UTF8 >/dev/null
    pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -l "$PG_DIR/log" \
        -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
}

pg_psql() { "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U chess -d postgres -qAt "$@"; }

pg_createdb() {
    pg_psql -c "CREATE DATABASE $1"
    echo "postgres://chess@127.0.0.1:$PG_PORT/$1"
}

pg_stop() {
    if [ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/data/PG_VERSION" ]; then
        pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    fi
}
