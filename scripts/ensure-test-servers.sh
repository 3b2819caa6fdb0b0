#!/usr/bin/env bash
# Makes sure the servers the test suites start are installed: nats-server (Debian's package),
# FerretDB v1.24.2 (built from its Go module), PostgreSQL's server (Debian's package, for the store
# scale test's FerretDB on PostgreSQL; the test fails without it), chromium (Debian's package) for the console's browser
# tests, and kustomize for the deployment test. Idempotent and
# quiet when they are there.
set -euo pipefail

FERRETDB_VERSION=v1.24.2
BIN_DIR="${HOME}/.local/bin"

have_nats() { [ -n "${NATS_SERVER_BIN:-}" ] || command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ]; }
have_ferretdb() { [ -n "${FERRETDB_BIN:-}" ] || command -v ferretdb >/dev/null 2>&1 || [ -x "${BIN_DIR}/ferretdb" ]; }

if ! have_nats; then
  echo "installing nats-server from Debian's packages" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nats-server >/dev/null
fi

# The server binaries only (initdb, postgres): the test runs a cluster of its own, never the service.
have_postgres() { [ -n "${POSTGRES_BIN_DIR:-}" ] || compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null; }
if ! have_postgres; then
  echo "installing postgresql from Debian's packages" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi

if ! have_ferretdb; then
  command -v go >/dev/null 2>&1 || { echo "FerretDB is built with Go, and go is not installed" >&2; exit 1; }
  echo "building FerretDB ${FERRETDB_VERSION} from its Go module (a few minutes the first time)" >&2
  # `go install pkg@version` fails here: the module proxy refuses the module's version list, which
  # go install reads for deprecation notices. So: download the module, copy it, and write the
  # build/version/version.txt that FerretDB's release process generates (its binary panics without
  # it), then build inside the copy.
  dir=$(GOFLAGS=-mod=mod go mod download -json "github.com/FerretDB/FerretDB@${FERRETDB_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "could not download the FerretDB module" >&2; exit 1; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp -r "$dir/." "$work/"
  chmod -R u+w "$work"
  echo "${FERRETDB_VERSION}" > "$work/build/version/version.txt"
  mkdir -p "$BIN_DIR"
  (cd "$work" && GOFLAGS=-mod=mod go build -trimpath -o "${BIN_DIR}/ferretdb" ./cmd/ferretdb)
fi

# The console's browser tests drive Debian's chromium (a browser download cannot work here).
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  echo "installing chromium from Debian's packages" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# The deployment test renders deploy/ with kustomize.
bash "$(dirname "$0")/ensure-deploy-tools.sh" kustomize
