#!/usr/bin/env bash
# Makes this machine ready for the tests; the README's test command runs it before `npm ci && npm test`.
#
#   scripts/test-prereqs.sh            as root on Debian or Ubuntu: install and start what is missing
#   scripts/test-prereqs.sh --check    only say what is missing
#
# The tests need dbus and gnome-keyring (the keychain tests start a throw-away keyring of their own), PostgreSQL at
# 127.0.0.1:5432 (trust auth for 127.0.0.1, a superuser role root, a database test) and Redis at 127.0.0.1:6379
# (the fleet tests). A machine that has them all is left as it is, without a call to apt; a server that already
# answers on its port is never touched, whoever runs it. Whatever is still missing (not root, no apt-get, --check,
# or a failed install) is named in one line each, the lines test/support/prereqs.ts prints, and the exit is 1.
set -euo pipefail

check_only=false
case "${1-}" in
  '') ;;
  --check) check_only=true ;;
  *)
    echo 'usage: scripts/test-prereqs.sh [--check]' >&2
    exit 2
    ;;
esac

on_path() { command -v "$1" >/dev/null 2>&1; }
# A refused connection returns at once; the timeout bounds only a port that drops it.
answers() { timeout 3 bash -c ": </dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# One line per missing prerequisite, in the order and words of test/support/prereqs.ts.
missing() {
  on_path dbus-daemon || echo 'test prerequisite missing: dbus-daemon (apt-get install dbus)'
  on_path dbus-send || echo 'test prerequisite missing: dbus-send (apt-get install dbus)'
  on_path gnome-keyring-daemon || echo 'test prerequisite missing: gnome-keyring-daemon (apt-get install gnome-keyring)'
  answers 5432 || echo 'test prerequisite missing: PostgreSQL at 127.0.0.1:5432 (apt-get install postgresql, started, trust auth for 127.0.0.1, a superuser role root, a database test)'
  answers 6379 || echo 'test prerequisite missing: Redis at 127.0.0.1:6379 (apt-get install redis-server, started)'
}

# The missing lines and what to do about them, on stderr; exit 1.
report() {
  printf '%s\n' "$1" "$2" >&2
  exit 1
}

lines=$(missing)
[[ -z $lines ]] && exit 0
if $check_only; then report "$lines" 'scripts/test-prereqs.sh, run as root on Debian or Ubuntu, installs them.'; fi
[[ $(id -u) == 0 ]] || report "$lines" 'not root, nothing installed: run scripts/test-prereqs.sh as root (Debian or Ubuntu) to install them.'
on_path apt-get || report "$lines" 'no apt-get (not Debian or Ubuntu), nothing installed: install them with this system'"'"'s packages.'

# Root on Debian from here. A failed step is said, and the check at the end names what is still missing.
step() {
  local rc
  set +e
  (
    set -e
    "$@"
  )
  rc=$?
  set -e
  ((rc == 0)) || echo "test-prereqs: $1 failed (exit $rc)" >&2
}

wait_for() {
  local i
  for ((i = 0; i < 150; i++)); do
    answers "$1" && return 0
    sleep 0.2
  done
  return 1
}

as_postgres() { (cd / && runuser -u postgres -- "$@"); }

# Only when nothing answered on 5432 before this script ran, so the cluster set up here is not someone's server.
setup_postgres() {
  local version hba rule='host all all 127.0.0.1/32 trust'
  version=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1)
  [[ -d /etc/postgresql/$version/main ]] || pg_createcluster "$version" main >/dev/null
  hba=/etc/postgresql/$version/main/pg_hba.conf
  # The first matching rule wins: trust goes above the packaged scram-sha-256 rule for 127.0.0.1.
  grep -qxF "$rule" "$hba" || sed -i "1i $rule" "$hba"
  # apt may have started it already (a systemd machine): then a reload reads the rule.
  if [[ $(pg_lsclusters -h "$version" main | awk '{print $4}') == online ]]; then
    pg_ctlcluster "$version" main reload
  else
    pg_ctlcluster "$version" main start
  fi
  wait_for 5432
  [[ $(as_postgres psql -qAtc "SELECT 1 FROM pg_roles WHERE rolname = 'root'") == 1 ]] ||
    as_postgres createuser --superuser root
  [[ $(as_postgres psql -qAtc "SELECT 1 FROM pg_database WHERE datname = 'test'") == 1 ]] ||
    as_postgres createdb --owner root test
}

# Debian's init script: the packaged configuration (127.0.0.1, /var/lib/redis), run as the redis user.
setup_redis() {
  answers 6379 || /etc/init.d/redis-server start >/dev/null
  wait_for 6379
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

packages=()
{ on_path dbus-daemon && on_path dbus-send; } || packages+=(dbus)
on_path gnome-keyring-daemon || packages+=(gnome-keyring)
postgres=false
redis=false
if ! answers 5432; then
  postgres=true
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null && on_path pg_ctlcluster || packages+=(postgresql)
fi
if ! answers 6379; then
  redis=true
  on_path redis-server || packages+=(redis-server)
fi
if ((${#packages[@]} > 0)); then
  echo "test-prereqs: apt-get install ${packages[*]}" >&2
  step apt_install "${packages[@]}"
fi
if $postgres; then step setup_postgres; fi
if $redis; then step setup_redis; fi

lines=$(missing)
[[ -z $lines ]] && exit 0
report "$lines" 'still missing after the set-up above.'
