#!/usr/bin/env bash
# Makes sure the tools that render and validate deploy/ are installed in ~/.local/bin, built from
# their Go modules (no other download is reachable here): kustomize (renders the overlays, the same
# engine as `kubectl kustomize`) and kubectl-validate (validates every object offline against the
# OpenAPI schemas of a Kubernetes release, which it embeds). Idempotent: a tool already built at
# the pinned version is kept, so only the first run pays for the builds (about 3 minutes).
#   bash scripts/ensure-deploy-tools.sh              both
#   bash scripts/ensure-deploy-tools.sh kustomize    kustomize only (what the test suites need)
set -euo pipefail

KUSTOMIZE_VERSION=v5.8.2
KUBECTL_VALIDATE_VERSION=v0.0.4
BIN_DIR="${HOME}/.local/bin"
mkdir -p "$BIN_DIR"

# Builds `module@version` in a writable copy of the module (go install module@version fails against
# this proxy, see ensure-test-servers.sh) into $BIN_DIR/<name>, and records the version beside it.
build_from_module() {
  local name=$1 module=$2 version=$3 ldflags=${4:-}
  command -v go >/dev/null 2>&1 || { echo "$name is built with Go, and go is not installed" >&2; exit 1; }
  echo "building $name $version from its Go module" >&2
  local dir work
  dir=$(GOFLAGS=-mod=mod go mod download -json "${module}@${version}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "could not download ${module}@${version}" >&2; exit 1; }
  work=$(mktemp -d)
  cp -r "$dir/." "$work/"
  chmod -R u+w "$work"
  # Module zips keep vendor/modules.txt without the vendored code: build from the module cache.
  rm -rf "$work/vendor"
  (cd "$work" && GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "${BIN_DIR}/${name}" .)
  rm -rf "$work"
  echo "$version" > "${BIN_DIR}/.${name}.version"
}

is_current() { [ -x "${BIN_DIR}/$1" ] && [ "$(cat "${BIN_DIR}/.$1.version" 2>/dev/null)" = "$2" ]; }

is_current kustomize "$KUSTOMIZE_VERSION" ||
  build_from_module kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION" \
    "-X sigs.k8s.io/kustomize/api/provenance.version=${KUSTOMIZE_VERSION}"

if [ "${1:-all}" != kustomize ]; then
  is_current kubectl-validate "$KUBECTL_VALIDATE_VERSION" ||
    build_from_module kubectl-validate sigs.k8s.io/kubectl-validate "$KUBECTL_VALIDATE_VERSION"
fi
