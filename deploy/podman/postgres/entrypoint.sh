#!/bin/sh
# The part of the official postgres image's docker-entrypoint.sh that the manifests use: on an
# empty PGDATA, initdb with the superuser POSTGRES_USER and the password from
# POSTGRES_PASSWORD_FILE (or POSTGRES_PASSWORD), password (scram-sha-256) logins over TCP from
# anywhere, listen on every address, and the database POSTGRES_DB; then run the server.
set -eu

if [ "${1:-}" != postgres ]; then
    exec "$@"
fi

: "${PGDATA:=/var/lib/postgresql/data}"
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    mkdir -p "$PGDATA"
    chmod 0700 "$PGDATA"
    if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
        password=$(cat "$POSTGRES_PASSWORD_FILE")
    else
        password="${POSTGRES_PASSWORD:?POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE must be set}"
    fi
    pwfile=$(mktemp)
    printf '%s\n' "$password" >"$pwfile"
    # initdb wants a user name for its uid; a uid without a passwd entry gets one from
    # nss_wrapper for this step only.
    if ! getent passwd "$(id -u)" >/dev/null 2>&1; then
        NSS_WRAPPER_PASSWD=$(mktemp)
        NSS_WRAPPER_GROUP=$(mktemp)
        echo "postgres:x:$(id -u):$(id -g):PostgreSQL:$PGDATA:/bin/false" >"$NSS_WRAPPER_PASSWD"
        echo "postgres:x:$(id -g):" >"$NSS_WRAPPER_GROUP"
        export NSS_WRAPPER_PASSWD NSS_WRAPPER_GROUP
        export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libnss_wrapper.so
    fi
    initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        --pgdata="$PGDATA" >/dev/null
    unset LD_PRELOAD NSS_WRAPPER_PASSWD NSS_WRAPPER_GROUP
    rm -f "$pwfile"
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # A server on the socket only, to create the database, as the official image does.
        pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait --silent start
        psql --no-psqlrc --username="$user" --dbname=postgres --set ON_ERROR_STOP=1 \
            --command="CREATE DATABASE \"$db\"" >/dev/null
        pg_ctl --pgdata="$PGDATA" --mode=fast --wait --silent stop
    fi
    echo "entrypoint: initialised $PGDATA (user $user, database $db)"
fi

exec "$@"
