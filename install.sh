#!/usr/bin/env bash
# install.sh -- install ocr-daemon on Debian/Ubuntu (run as root), or into a staging root.
#
#   sudo ./install.sh                 full install: apt packages, user, venv, config, folders,
#                                     systemd unit; enables and starts the service
#   ./install.sh --root DIR --no-apt  stage everything under DIR without touching the system
#   ./install.sh --help               all options
#
# Safe to run again (upgrade): the venv is reused and the package re-installed from this
# checkout; an edited /etc/ocr-daemon/rules.yaml is never overwritten (the new default goes
# next to it as rules.yaml.dist-new); the unit is replaced and the service restarted.
#
# Layout of a real install (--root DIR puts the same tree under DIR):
#   /opt/ocr-daemon/venv                   Python venv with the ocr-daemon package
#   /opt/ocr-daemon/rules.yaml.default     the default config as last installed (to detect edits)
#   /etc/ocr-daemon/rules.yaml             the config (root:ocr-daemon 0640)
#   /srv/ocr/{inbox,archive,failed}        watched inbox, archived sources, failed documents
#   /var/lib/ocr-daemon                    state (journal database; ocr-daemon.pid without systemd)
#   /var/log/ocr-daemon                    the log of a daemon run without systemd (--log-file)
#   /etc/systemd/system/ocr-daemon.service (+ ocr-daemon.service.d/gpu.conf with an NVIDIA GPU)
#
# --root DIR: a venv cannot be moved after it is created, so the staged tree is made to work
# *where it is*: the copies of rules.yaml and of the unit installed under DIR have their paths
# (/opt/ocr-daemon, /etc/ocr-daemon, /srv/ocr, /var/lib/ocr-daemon) rewritten to point inside DIR,
# and `DIR/opt/ocr-daemon/venv/bin/ocr-daemon check-config --config DIR/etc/ocr-daemon/rules.yaml`
# runs as is. Nothing outside DIR is changed: no apt, no user, no chown, no systemctl; the
# system changes a real install would make are written to DIR/opt/ocr-daemon/staged-actions.txt.
set -euo pipefail
# Whatever the caller's umask: the venv, config folder and unit must be readable by the service
# user and by systemd (a root umask of 077 would leave the venv unreadable for ocr-daemon).
umask 022

readonly SERVICE_USER=ocr-daemon
REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly REPO_DIR

# Debian packages: Tesseract with orientation detection and the 11 languages the daemon
# classifies, the venv module, and what systemd-python needs to build from source; Ghostscript
# for the pdf output's PDF/A conversion (routes[].pdfa).
readonly APT_PACKAGES=(
  tesseract-ocr tesseract-ocr-osd
  tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-chi-tra tesseract-ocr-jpn
  tesseract-ocr-fra tesseract-ocr-deu tesseract-ocr-spa tesseract-ocr-ita tesseract-ocr-nld
  tesseract-ocr-por tesseract-ocr-swe tesseract-ocr-dan
  tesseract-ocr-jpn-vert tesseract-ocr-chi-sim-vert tesseract-ocr-chi-tra-vert
  python3 python3-venv python3-dev
  libsystemd-dev pkg-config gcc
  ghostscript
)

ROOT=""
UNINSTALL=0
PURGE=0
DO_APT=1
DO_START=1
GPU=auto
GPU_LINES_DIR=""
PYTHON=""   # default chosen after the apt step (see there)
PIP_ARGS=()

usage() {
  cat <<EOF
Usage: $0 [OPTIONS]

Install ocr-daemon from this checkout ($REPO_DIR).

Without --root (must run as root): installs the Debian packages (Tesseract + 11 language
packs, python3-venv, build deps of systemd-python), creates the system user '$SERVICE_USER',
a venv in /opt/ocr-daemon/venv with the package (plus the [vllm] extra when an NVIDIA GPU is
present), /etc/ocr-daemon/rules.yaml (an edited one is kept; the new default is written
as rules.yaml.dist-new), /srv/ocr/{inbox,archive,failed}, /var/lib/ocr-daemon and the systemd
unit (+ GPU drop-in), then enables and starts ocr-daemon.service when systemd is running.

Options:
  --root DIR        stage the install under DIR instead of /, touching nothing outside it:
                    no apt, no useradd/chown, no systemctl (written to
                    DIR/opt/ocr-daemon/staged-actions.txt instead). The staged rules.yaml and
                    unit point inside DIR, so the staged ocr-daemon runs in place.
  --no-apt          do not install Debian packages (they must be there already)
  --no-start        install and reload systemd, but do not enable/start the service
  --gpu             install the [vllm] extra and the GPU drop-in even if no GPU is detected
  --no-gpu          CPU (Tesseract) install even if an NVIDIA GPU is detected
  --python PATH     Python used to create the venv (default: /usr/bin/python3; needs >= 3.11;
                    it must be readable by the service user, so not one under /root or /home)
  --pip-args ARGS   extra arguments for 'pip install', split on spaces
                    (e.g. --pip-args "--find-links /wheels --prefer-binary")
  --uninstall       stop and remove the service: the unit, the venv (/opt/ocr-daemon) and the
                    command's link. Kept: the config (/etc/ocr-daemon), the folders and their
                    files (/srv/ocr), the journal (/var/lib/ocr-daemon), the log folder and the
                    user -- installing again picks them up
  --purge           with --uninstall: remove those too (every document in /srv/ocr included)
  -h, --help        show this help and exit

After installing: drop a PDF or image into /srv/ocr/inbox; outputs appear where rules.yaml
routes them. Logs: journalctl -u ocr-daemon. Reload rules.yaml: systemctl reload ocr-daemon.
EOF
}

log() { printf '==> %s\n' "$*"; }
warn() { printf 'install.sh: warning: %s\n' "$*" >&2; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --root) [ $# -ge 2 ] || die "--root needs a directory"; ROOT=$2; shift 2 ;;
    --root=*) ROOT=${1#--root=}; shift ;;
    --no-apt) DO_APT=0; shift ;;
    --no-start) DO_START=0; shift ;;
    --gpu) GPU=yes; shift ;;
    --no-gpu) GPU=no; shift ;;
    --python) [ $# -ge 2 ] || die "--python needs a path"; PYTHON=$2; shift 2 ;;
    --python=*) PYTHON=${1#--python=}; shift ;;
    --pip-args) [ $# -ge 2 ] || die "--pip-args needs a value"; read -r -a PIP_ARGS <<<"$2"; shift 2 ;;
    --pip-args=*) read -r -a PIP_ARGS <<<"${1#--pip-args=}"; shift ;;
    # internal (tests): print the GPU drop-in's extra lines for the device nodes under DIR, exit
    --gpu-device-lines) [ $# -ge 2 ] || die "--gpu-device-lines needs a directory"; GPU_LINES_DIR=$2; shift 2 ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

# The lines the GPU drop-in gets beyond its template (which allows /dev/nvidia0): one DeviceAllow=
# per further GPU node (/dev/nvidia1, /dev/nvidia2, ...: vLLM's data parallelism opens them all)
# and, where the nodes are not world-accessible (e.g. root:video 0660), the group that may open them.
# With N > 1 GPUs the host-memory limits grow by 12 GiB per further GPU: each engine core is its own
# process with its own CUDA context, torch and pinned buffers (an estimate: tests/gpu/test_e logs
# the engine cores' resident memory); the template's figures are for one.
gpu_device_lines() {  # gpu_device_lines DEVDIR
  local dev mode group n=0
  for dev in "$1"/nvidia[0-9]*; do
    [ -e "$dev" ] || continue
    case ${dev##*/nvidia} in *[!0-9]*) continue ;; esac  # nvidia0-style nodes only
    n=$((n + 1))
    [ "${dev##*/}" != nvidia0 ] || continue
    echo "DeviceAllow=$dev rw"
  done
  if [ $n -gt 1 ]; then
    echo "MemoryHigh=$((28 + 12 * (n - 1)))G"
    echo "MemoryMax=$((32 + 12 * (n - 1)))G"
  fi
  if [ -e "$1/nvidiactl" ]; then
    mode=$(stat -c %a "$1/nvidiactl")
    group=$(stat -c %G "$1/nvidiactl")
    if [ $(( ${mode: -1} & 6 )) -ne 6 ] && [ "$group" != root ]; then
      echo "SupplementaryGroups=$group"
    fi
  fi
}
if [ -n "$GPU_LINES_DIR" ]; then gpu_device_lines "$GPU_LINES_DIR"; exit 0; fi

if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT"
  ROOT=$(cd "$ROOT" && pwd)   # absolute, so the rewritten paths work from anywhere
  [ "$ROOT" != / ] || ROOT=""
fi
STAGED=0; [ -z "$ROOT" ] || STAGED=1

# Target paths (as the running service sees them) and where this run writes them.
readonly T_PREFIX=/opt/ocr-daemon T_ETC=/etc/ocr-daemon T_SRV=/srv/ocr T_STATE=/var/lib/ocr-daemon
readonly T_LOG=/var/log/ocr-daemon
PREFIX=$ROOT$T_PREFIX
LOGDIR=$ROOT$T_LOG
VENV=$PREFIX/venv
ETC=$ROOT$T_ETC
SRV=$ROOT$T_SRV
STATE=$ROOT$T_STATE
UNIT_DIR=$ROOT/etc/systemd/system
ACTIONS=$PREFIX/staged-actions.txt

[ -f "$REPO_DIR/pyproject.toml" ] || die "run install.sh from an ocr-daemon checkout ($REPO_DIR has no pyproject.toml)"
[ -f "$REPO_DIR/rules.yaml" ] || die "$REPO_DIR/rules.yaml (the default config) is missing"
[ -f "$REPO_DIR/systemd/ocr-daemon.service" ] || die "$REPO_DIR/systemd/ocr-daemon.service is missing"
if [ $STAGED = 0 ] && [ "$(id -u)" != 0 ]; then
  die "a system install must run as root (sudo $0), or stage it with --root DIR"
fi

# In a staged install, a system change is recorded instead of made.
if [ $STAGED = 1 ]; then
  mkdir -p "$PREFIX"
  {
    echo "# System changes a real install (without --root) would make; written by install.sh."
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) from $REPO_DIR"
  } >"$ACTIONS"
fi
system() {  # system CMD ARGS...: run a command that changes the system, or record it
  if [ $STAGED = 1 ]; then
    printf '%q ' "$@" >>"$ACTIONS"; printf '\n' >>"$ACTIONS"
  else
    "$@"
  fi
}

# Rewrite the target paths in a file so that they point inside the staging root.
# One sed pass with one alternation, so a path already rewritten is never rewritten again
# (DIR itself may contain e.g. /srv/ocr); DIR is escaped for the replacement text.
stage_paths() {  # stage_paths SRC DEST
  if [ $STAGED = 1 ]; then
    local root_esc
    root_esc=$(printf '%s' "$ROOT" | sed -e 's/[#&\\]/\\&/g')
    sed -e "s#\($T_PREFIX\|$T_ETC\|$T_SRV\|$T_STATE\)#$root_esc\1#g" "$1" >"$2"
  else
    cat "$1" >"$2"
  fi
}

# --- uninstall -------------------------------------------------------------------------------
if [ $UNINSTALL = 1 ]; then
  # A daemon run without systemd (the command printed at the end of an install): its pid file
  PID_FILE=$STATE/ocr-daemon.pid
  if [ $STAGED = 0 ] && [ -d /run/systemd/system ]; then
    systemctl disable --now ocr-daemon.service 2>/dev/null || true
  elif [ $STAGED = 1 ]; then
    system systemctl disable --now ocr-daemon.service
  fi
  if [ -s "$PID_FILE" ] && pid=$(cat "$PID_FILE") && kill -0 "$pid" 2>/dev/null; then
    log "stopping the daemon (pid $pid; it finishes the documents in flight first)"
    kill -TERM "$pid"
    for _ in $(seq 120); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && die "the daemon (pid $pid) did not stop; stop it, then run this again"
  fi
  rm -rf "$UNIT_DIR/ocr-daemon.service" "$UNIT_DIR/ocr-daemon.service.d"
  [ $STAGED = 1 ] || [ ! -d /run/systemd/system ] || systemctl daemon-reload
  BIN_LINK=$ROOT/usr/local/bin/ocr-daemon
  if [ -L "$BIN_LINK" ] && [ "$(readlink "$BIN_LINK")" = "$VENV/bin/ocr-daemon" ]; then rm -f "$BIN_LINK"; fi
  rm -rf "$PREFIX"
  log "removed: the service, $PREFIX, $BIN_LINK"
  if [ $PURGE = 1 ]; then
    rm -rf "$ETC" "$SRV" "$STATE" "$LOGDIR"
    if [ $STAGED = 1 ]; then
      mkdir -p "$PREFIX"; echo "# System changes a real uninstall --purge (without --root) would make" >"$ACTIONS"
    fi
    if [ $STAGED = 1 ] || id "$SERVICE_USER" >/dev/null 2>&1; then system userdel "$SERVICE_USER"; fi
    log "purged: $ETC, $SRV (with every document in it), $STATE, $LOGDIR and the user $SERVICE_USER"
  else
    log "kept: $ETC (config), $SRV (inbox, archive, failed and their files), $STATE (journal), $LOGDIR, the user $SERVICE_USER"
    log "remove them too with: $0 --uninstall --purge${ROOT:+ --root $ROOT}"
  fi
  exit 0
fi

has_gpu() {
  case "$GPU" in
    yes) return 0 ;;
    no) return 1 ;;
  esac
  [ -e /dev/nvidia0 ] && return 0
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}

WITH_GPU=0
if has_gpu; then WITH_GPU=1; fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# --- 1. Debian packages --------------------------------------------------------------------
if [ $DO_APT = 1 ]; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "Debian packages: all present"
  elif [ $STAGED = 1 ]; then
    log "Debian packages: staged install, recording: apt-get install ${missing[*]}"
    system apt-get install -y --no-install-recommends "${missing[@]}"
  else
    log "Debian packages: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
else
  log "Debian packages: skipped (--no-apt)"
fi
# Debian's interpreter, not whatever python3 comes first on PATH: a pyenv/conda Python under
# /root or /home would be unreadable for the service user (and hidden by ProtectHome=yes).
if [ -z "$PYTHON" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (install python3, or pass --python)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "$PYTHON is older than 3.11"
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null \
  || die "$PYTHON cannot create venvs (apt-get install python3-venv, or drop --no-apt)"
if ! command -v tesseract >/dev/null 2>&1; then
  warn "tesseract is not installed: the Tesseract engine will not start until it is (apt-get install tesseract-ocr ...)"
fi

# --- 2. Service user -----------------------------------------------------------------------
# A static system user (not DynamicUser=): it owns /srv/ocr, which people and other services
# share, and a stable uid keeps file ownership meaningful across restarts.
if getent passwd "$SERVICE_USER" >/dev/null 2>&1; then
  log "user $SERVICE_USER: exists"
else
  log "user $SERVICE_USER: creating (system user, no login shell, home $T_STATE)$([ $STAGED = 0 ] || echo ' [recorded only]')"
  system useradd --system --user-group --home-dir "$T_STATE" --no-create-home \
    --shell /usr/sbin/nologin --comment "ocr-daemon OCR service" "$SERVICE_USER"
fi

# --- 3. venv + package ---------------------------------------------------------------------
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c '' 2>/dev/null; then
  log "venv $VENV: reusing"
else
  log "venv $VENV: creating with $("$PYTHON" --version 2>&1)"
  mkdir -p "$PREFIX"
  "$PYTHON" -m venv "$VENV"
fi
# Build from a clean copy of the checkout: no .venv/.git/caches in the build, and no build/
# or egg-info litter (or races between two installs) in the checkout itself.
SRC=$TMP/src
mkdir -p "$SRC"
tar -C "$REPO_DIR" \
  --exclude=./.git --exclude=./.venv --exclude=./.devwh --exclude=./build --exclude=./dist \
  --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache --exclude=.mypy_cache \
  --exclude=.ruff_cache --exclude=./bench/out -cf - . | tar -C "$SRC" -xf -
SPEC=$SRC
if [ $WITH_GPU = 1 ]; then
  SPEC="$SRC[vllm]"
  log "package: installing with the [vllm] extra (NVIDIA GPU found, or --gpu)"
else
  log "package: installing (CPU/Tesseract; no NVIDIA GPU found, or --no-gpu)"
fi
# --upgrade: re-installing over an older version replaces it; dependencies are upgraded only
# where the new version needs it.
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade ${PIP_ARGS[@]+"${PIP_ARGS[@]}"} "$SPEC"
[ -x "$VENV/bin/ocr-daemon" ] || die "pip did not install $VENV/bin/ocr-daemon"
install -m 0644 "$REPO_DIR/README.md" "$PREFIX/README.md"
# The command on PATH (every README example runs `ocr-daemon ...`): a link to the venv's script,
# which runs the venv's Python whatever PATH says. Staged: the link is made inside DIR and points
# to the staged venv, so DIR/usr/local/bin/ocr-daemon works where it is.
BIN_LINK=$ROOT/usr/local/bin/ocr-daemon
mkdir -p "$(dirname "$BIN_LINK")"
if [ -e "$BIN_LINK" ] && [ ! -L "$BIN_LINK" ]; then
  warn "$BIN_LINK exists and is not a link (installed by something else); left alone: run $VENV/bin/ocr-daemon"
else
  ln -sfn "$VENV/bin/ocr-daemon" "$BIN_LINK"
  log "command: $BIN_LINK -> $VENV/bin/ocr-daemon"
fi

# --- 4. Configuration ----------------------------------------------------------------------
# Like a dpkg conffile: the default as last installed is kept in $PREFIX/rules.yaml.default.
# rules.yaml equal to it (or missing) = not edited -> replaced by the new default.
# Otherwise it is the admin's file: left alone, the new default written as rules.yaml.dist-new.
mkdir -p "$ETC"
NEW_DEFAULT=$TMP/rules.yaml
stage_paths "$REPO_DIR/rules.yaml" "$NEW_DEFAULT"
CONF=$ETC/rules.yaml
OLD_DEFAULT=$PREFIX/rules.yaml.default
CONFIG_NOTE=""
install_conf() {  # install_conf SRC DEST
  install -m 0640 "$1" "$2"
  system chown "root:$SERVICE_USER" "$2"
}
if [ ! -e "$CONF" ]; then
  log "config: installing the default $CONF"
  install_conf "$NEW_DEFAULT" "$CONF"
elif cmp -s "$CONF" "$NEW_DEFAULT"; then
  log "config: $CONF is the current default"
  rm -f "$CONF.dist-new"
elif [ -f "$OLD_DEFAULT" ] && cmp -s "$CONF" "$OLD_DEFAULT"; then
  log "config: $CONF was not edited; updating it to the new default"
  install_conf "$NEW_DEFAULT" "$CONF"
  rm -f "$CONF.dist-new"
else
  install_conf "$NEW_DEFAULT" "$CONF.dist-new"
  CONFIG_NOTE="$CONF was edited and is kept as is; the new default is in $CONF.dist-new (compare: diff -u $CONF $CONF.dist-new)"
  log "config: $CONFIG_NOTE"
fi
install -m 0644 "$NEW_DEFAULT" "$OLD_DEFAULT"
system chown "root:$SERVICE_USER" "$ETC"

# --- 5. Folders ----------------------------------------------------------------------------
# Inbox: setgid group ocr-daemon, group-writable: members of the group (usermod -aG ocr-daemon
# USER) drop files there; the daemon reads, archives and writes outputs as ocr-daemon.
log "folders: $SRV/{inbox,archive,failed}, $STATE"
mkdir -p "$SRV/inbox" "$SRV/archive" "$SRV/failed" "$STATE"
chmod 0755 "$SRV"
chmod 2775 "$SRV/inbox"
chmod 2750 "$SRV/archive" "$SRV/failed"
chmod 0750 "$STATE"
# The log folder of a daemon run without systemd (`run --log-file`, the command printed at the end)
mkdir -p "$LOGDIR"
chmod 0750 "$LOGDIR"
system chown "$SERVICE_USER:$SERVICE_USER" "$SRV" "$SRV/inbox" "$SRV/archive" "$SRV/failed" "$STATE" "$LOGDIR"
# The state folder is the service's alone: a journal left there by `ocr-daemon once` run as root
# (or restored from a backup as root) would be read-only to the service ("attempt to write a
# readonly database"); hand back whatever in it belongs to someone else.
if [ $STAGED = 0 ] && [ -n "$(find "$STATE" -mindepth 1 ! -user "$SERVICE_USER" -print -quit 2>/dev/null)" ]; then
  log "state: $STATE holds files of another user; giving them to $SERVICE_USER"
  find "$STATE" -mindepth 1 ! -user "$SERVICE_USER" -exec chown -h "$SERVICE_USER:$SERVICE_USER" {} +
fi

# --- 6. systemd unit -----------------------------------------------------------------------
mkdir -p "$UNIT_DIR"
stage_paths "$REPO_DIR/systemd/ocr-daemon.service" "$TMP/ocr-daemon.service"
install -m 0644 "$TMP/ocr-daemon.service" "$UNIT_DIR/ocr-daemon.service"
log "unit: $UNIT_DIR/ocr-daemon.service"
DROPIN=$UNIT_DIR/ocr-daemon.service.d/gpu.conf
if [ $WITH_GPU = 1 ]; then
  mkdir -p "$UNIT_DIR/ocr-daemon.service.d"
  stage_paths "$REPO_DIR/systemd/ocr-daemon.service.d/gpu.conf" "$TMP/gpu.conf"
  # The template allows /dev/nvidia0; open every further GPU of this machine as well. Most
  # drivers create the nodes 0666; where they are group-only the service user needs that group.
  gpu_device_lines /dev >>"$TMP/gpu.conf"
  install -m 0644 "$TMP/gpu.conf" "$DROPIN"
  log "unit: GPU drop-in $DROPIN"
elif [ -e "$DROPIN" ]; then
  warn "no GPU found but $DROPIN exists (from an earlier install); left in place"
fi
# The base unit allows only local sockets; a remote OpenAI-compatible engine needs the network.
ENGINE_KIND=$("$VENV/bin/python" -c 'import sys
from daemon.config import load_config
print(load_config(sys.argv[1]).engine.kind)' "$CONF" 2>/dev/null || echo unknown)
NET_DROPIN=$UNIT_DIR/ocr-daemon.service.d/network.conf
if [ "$ENGINE_KIND" = openai ]; then
  mkdir -p "$UNIT_DIR/ocr-daemon.service.d"
  install -m 0644 "$REPO_DIR/systemd/ocr-daemon.service.d/network.conf" "$NET_DROPIN"
  log "unit: network drop-in $NET_DROPIN (engine.kind: openai)"
elif [ -e "$NET_DROPIN" ]; then
  warn "$NET_DROPIN exists but engine.kind is $ENGINE_KIND; left in place (remove it if the engine needs no network)"
fi

# --- 7. Check the config with the installed package ----------------------------------------
# As the service user on a real install: this also proves it can run the venv and read the config.
CONFIG_OK=1
AS_USER=()
if [ $STAGED = 0 ]; then
  AS_USER=(setpriv "--reuid=$SERVICE_USER" "--regid=$SERVICE_USER" --init-groups)
fi
if ${AS_USER[@]+"${AS_USER[@]}"} "$VENV/bin/ocr-daemon" check-config --config "$CONF"; then
  log "config: $CONF is valid"
else
  CONFIG_OK=0
  warn "$CONF does not pass check-config (errors above); the service will refuse to start until it is fixed"
fi

# --- 8. Start ------------------------------------------------------------------------------
RUN_CMD="$VENV/bin/ocr-daemon run --config $CONF"
# Without systemd: the whole command, detached from the terminal (setsid -f: a new session, the
# shell returns at once), as the service user, logging to a file, its pid in the state folder.
LOG_FILE=$LOGDIR/ocr-daemon.log
PID_FILE=$STATE/ocr-daemon.pid
DETACHED_CMD="setsid -f setpriv --reuid=$SERVICE_USER --regid=$SERVICE_USER --init-groups $RUN_CMD --log-file $LOG_FILE --pid-file $PID_FILE"
if [ $STAGED = 1 ]; then
  system systemctl daemon-reload
  system systemctl enable ocr-daemon.service
  system systemctl restart ocr-daemon.service
  log "staged install in $ROOT done; system changes a real install would make: $ACTIONS"
  log "run it in the foreground: $RUN_CMD"
elif [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  if [ $DO_START = 0 ]; then
    log "service: not started (--no-start); start it with: systemctl enable --now ocr-daemon"
  elif [ $CONFIG_OK = 0 ]; then
    log "service: not started (invalid config); fix $CONF, then: systemctl enable --now ocr-daemon"
  else
    systemctl enable ocr-daemon.service
    # restart, not start: an upgrade must replace the running daemon (SIGTERM drains it first).
    systemctl restart ocr-daemon.service
    if systemctl is-active --quiet ocr-daemon.service; then
      log "service: ocr-daemon is running (journalctl -u ocr-daemon -f to follow it)"
    else
      warn "ocr-daemon did not stay up; see: systemctl status ocr-daemon; journalctl -u ocr-daemon"
      exit 1
    fi
  fi
else
  log "systemd is not running on this machine; start the daemon (detached, as $SERVICE_USER) with:"
  log "  $DETACHED_CMD"
  log "then: tail -f $LOG_FILE (its log); kill -HUP \$(cat $PID_FILE) (reload rules.yaml); kill \$(cat $PID_FILE) (stop)"
fi
[ -z "$CONFIG_NOTE" ] || log "note: $CONFIG_NOTE"
log "drop a PDF or image into $SRV/inbox to OCR it"
[ $CONFIG_OK = 1 ] || exit 2
