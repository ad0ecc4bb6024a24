#!/bin/sh
# The platform's host agent installer (src/agent; src/orgs/README.md "External hosts"). install.shell, shown
# once when an admin registers a host (POST /v1/org/hosts), downloads this script from the control plane and
# runs it as root on a Debian machine with PLATFORM_URL, AGENT_BOOTSTRAP_TOKEN, AGENT_HOST_NAME and
# AGENT_DOWNLOAD_URL in its environment. It installs podman and runc, unpacks the platform, and starts the
# agent (a systemd unit), which registers with the token and then talks to the control plane over HTTPS only.
#
# Also honoured (tests, development, unusual machines):
#   AGENT_SOURCE_DIR   a platform checkout already on this machine: nothing is downloaded or built
#   AGENT_SKIP_APT=1   the packages are installed already: apt-get is not run
#   AGENT_FOREGROUND=1 no systemd unit: the agent runs in the foreground in place of this script
#   AGENT_STATE_DIR    where the agent keeps its credential (/var/lib/platform-agent)
#   AGENT_HOME         where the platform is unpacked (/opt/platform-agent)
#   AGENT_LABELS, AGENT_GPU_SLOTS, AGENT_ADVERTISE_HOST, AGENT_NAME_PREFIX: passed on to the agent
set -eu

: "${PLATFORM_URL:?PLATFORM_URL (the control plane) is required}"
AGENT_BOOTSTRAP_TOKEN="${AGENT_BOOTSTRAP_TOKEN:-}"
AGENT_STATE_DIR="${AGENT_STATE_DIR:-/var/lib/platform-agent}"
AGENT_HOME="${AGENT_HOME:-/opt/platform-agent}"
export PLATFORM_URL AGENT_BOOTSTRAP_TOKEN AGENT_STATE_DIR
say() { echo "platform-agent install: $*" >&2; }

if [ -z "${AGENT_SKIP_APT:-}" ]; then
  say "installing podman, runc and node"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q podman runc netavark aardvark-dns catatonit nodejs npm curl ca-certificates
fi

if [ -n "${AGENT_SOURCE_DIR:-}" ]; then
  src="$AGENT_SOURCE_DIR"
  say "using the platform at $src"
else
  : "${AGENT_DOWNLOAD_URL:?AGENT_DOWNLOAD_URL (the platform tarball) is required; the control plane sets it}"
  say "downloading $AGENT_DOWNLOAD_URL"
  mkdir -p "$AGENT_HOME"
  curl -fsSL "$AGENT_DOWNLOAD_URL" | tar -xz -C "$AGENT_HOME" --strip-components=1
  (cd "$AGENT_HOME" && npm ci --omit=dev --no-audit --no-fund)
  src="$AGENT_HOME"
fi
[ -f "$src/src/agent/main.ts" ] || { say "no src/agent/main.ts under $src"; exit 1; }

# the agent's environment, readable by root only (it holds the bootstrap token until registration uses it)
mkdir -p "$AGENT_STATE_DIR"
chmod 700 "$AGENT_STATE_DIR"
umask 077
{
  echo "PLATFORM_URL=$PLATFORM_URL"
  echo "AGENT_BOOTSTRAP_TOKEN=$AGENT_BOOTSTRAP_TOKEN"
  echo "AGENT_STATE_DIR=$AGENT_STATE_DIR"
  for v in AGENT_HOST_NAME AGENT_LABELS AGENT_GPU_SLOTS AGENT_ADVERTISE_HOST AGENT_NAME_PREFIX PODMAN_BIN; do
    eval "val=\${$v:-}"
    [ -z "$val" ] || echo "$v=$val"
  done
} > "$AGENT_STATE_DIR/agent.env"

node_bin="$(command -v node)"
if [ -n "${AGENT_FOREGROUND:-}" ] || ! command -v systemctl >/dev/null 2>&1 || [ ! -d /run/systemd/system ]; then
  say "starting the agent in the foreground"
  cd "$src"
  exec "$node_bin" --import tsx src/agent/main.ts
fi

cat > /etc/systemd/system/platform-agent.service <<UNIT
[Unit]
Description=Platform host agent
After=network-online.target
Wants=network-online.target

[Service]
EnvironmentFile=$AGENT_STATE_DIR/agent.env
WorkingDirectory=$src
ExecStart=$node_bin --import tsx src/agent/main.ts
Restart=always
RestartSec=2
# 78: the control plane refused the credential (host deleted); restarting would not help
RestartPreventExitStatus=78
# containers run under conmon: stopping or restarting the agent leaves them running (it adopts them)
KillMode=process

[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable --now platform-agent.service
systemctl restart platform-agent.service
say "the agent runs as platform-agent.service (journalctl -u platform-agent)"
