# Sourced by scripts/setup, scripts/stn and scripts/install: finds programs where Debian/Ubuntu,
# Homebrew, npm and per-user installs put them, not only on $PATH — cron runs with PATH=/usr/bin:/bin
# while Debian installs nats-server, dockerd and debootstrap in /usr/sbin (issue 22). Same list as
# src/lib/programs.ts, which the runtime uses.
STN_PROGRAM_DIRS=(/usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin /opt/homebrew/bin
  /home/linuxbrew/.linuxbrew/bin /snap/bin "${HOME:-/nonexistent}/.local/bin" "${HOME:-/nonexistent}/.deno/bin")

# find_program NAME [DEBIAN_PACKAGE]: prints the path of NAME (on $PATH, in the standard directories,
# or where the package database says the package put it); fails when there is none.
find_program() {
  local found dir
  if found=$(command -v "$1" 2>/dev/null) && [ -x "$found" ]; then
    echo "$found"
    return 0
  fi
  for dir in "${STN_PROGRAM_DIRS[@]}"; do
    if [ -f "$dir/$1" ] && [ -x "$dir/$1" ]; then
      echo "$dir/$1"
      return 0
    fi
  done
  if [ -n "${2:-}" ] && command -v dpkg-query >/dev/null 2>&1; then
    found=$(dpkg-query -L "$2" 2>/dev/null | grep -m1 "/$1\$" || true)
    if [ -n "$found" ] && [ -f "$found" ] && [ -x "$found" ]; then
      echo "$found"
      return 0
    fi
  fi
  return 1
}

# deb_installed PACKAGE: true when the package database has PACKAGE installed.
deb_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

# find_deno: the Deno 2.9.x that runs stn.
find_deno() {
  local deno
  deno=$(find_program deno) || return 1
  [[ "$("$deno" --version 2>/dev/null | head -1)" == "deno 2.9."* ]] || return 1
  echo "$deno"
}
