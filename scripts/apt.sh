# Sourced by the scripts that install Debian packages: apt_install PACKAGE...
# installs those not installed yet (one apt-get update first; sudo when not root).
# The caller defines log().
apt_install() {
  local missing=() sudo=
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return 0
  log "installing Debian packages: ${missing[*]}"
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
