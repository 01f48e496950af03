#!/usr/bin/env bash
# Makes sure a PostgreSQL server runs on loopback for the PostgreSQL store's tests, with
# a role and a database `agentyard` (password `agentyard`) that may create schemas, and
# prints the server's URL as the last line:
#
#     export AGENTYARD_TEST_POSTGRES_URL="$(store/ci/postgres.sh | tail -n1)"
#
# On a fresh Debian machine it installs the `postgresql` package (apt-get), creates a
# cluster if there is none, and starts it; where a server already runs it only adds
# the role and the database if they are missing. Idempotent. Needs root (or sudo) for
# the install and the start; `.ci/run` calls it.
set -euo pipefail

as_root() {
    if [[ "$(id -u)" == 0 ]]; then "$@"; else sudo -n "$@"; fi
}
as_postgres() {
    if [[ "$(id -u)" == 0 ]]; then runuser -u postgres -- "$@"; else sudo -n -u postgres "$@"; fi
}
say() { echo "postgres: $*" >&2; }

# 1. Installed: the server binaries and Debian's cluster tools.
if ! command -v pg_lsclusters >/dev/null 2>&1 || ! compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null; then
    say "installing the postgresql package"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >&2
fi

# 2. A cluster: the first one there is, or a new one of the newest version installed.
cluster="$(pg_lsclusters --no-header 2>/dev/null | head -n1 || true)"
if [[ -z "$cluster" ]]; then
    version="$(ls /usr/lib/postgresql | sort -V | tail -n1)"
    say "creating cluster $version/main"
    as_root pg_createcluster "$version" main >&2
    cluster="$(pg_lsclusters --no-header | head -n1)"
fi
read -r version name port status _ <<<"$cluster"

# 3. Running, on loopback. (No systemd on CI machines: start the cluster directly.)
if [[ "$status" != online* ]]; then
    say "starting cluster $version/$name on port $port"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start >&2
fi
for _ in $(seq 1 60); do
    if pg_isready -q -h 127.0.0.1 -p "$port"; then break; fi
    sleep 0.5
done
if ! pg_isready -q -h 127.0.0.1 -p "$port"; then
    say "the server of cluster $version/$name does not answer on 127.0.0.1:$port"
    exit 1
fi

# 4. The role and the database the tests use.
psql_admin() { as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$port" -d postgres "$@"; }
if [[ "$(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'agentyard'")" != 1 ]]; then
    say "creating role agentyard"
    psql_admin -c "CREATE ROLE agentyard LOGIN PASSWORD 'agentyard'"
fi
if [[ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = 'agentyard'")" != 1 ]]; then
    say "creating database agentyard"
    psql_admin -c "CREATE DATABASE agentyard OWNER agentyard"
fi

url="postgres://agentyard:agentyard@127.0.0.1:$port/agentyard"
# 5. The URL works with a password over TCP (what the tests do).
if ! PGPASSWORD=agentyard psql -X -q -h 127.0.0.1 -p "$port" -U agentyard -d agentyard -tAc "SELECT 1" >/dev/null; then
    say "cannot log in as agentyard over 127.0.0.1:$port; check pg_hba.conf"
    exit 1
fi
say "ready at 127.0.0.1:$port (cluster $version/$name)"
echo "$url"
