#!/usr/bin/env bash
# The Debian package as a user gets it: `cpack -G DEB` builds it, apt-get installs it (as root, as
# CI runs; otherwise it is unpacked with dpkg -x into a scratch folder, and the summary says so),
# then the installed faultline diagnoses a sample, `man faultline` renders every command and bash
# completes the commands. An install is removed again, so the machine is left as it was found.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR (ctest -L package runs it alone)
set -uo pipefail

build=$1
root=$2
scratch=$(mktemp -d)
installed=""
cleanup() {
  if [[ -n $installed ]]; then
    apt-get remove -y -qq -o DPkg::Lock::Timeout=300 faultline >/dev/null 2>&1 ||
      echo "could not remove the faultline package: apt-get remove faultline" >&2
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# shellcheck source=tests/lib.sh
source "$(dirname "$0")/lib.sh"

# --- The .deb: its name, its Depends and its files. ---
if ! (cd "$scratch" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch/deb" >cpack.log 2>&1); then
  cat "$scratch/cpack.log" >&2
  echo "FAIL: cpack -G DEB" >&2
  exit 1
fi
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
deb=$scratch/deb/faultline_${version}_$(dpkg --print-architecture).deb
check "the package is named faultline_VERSION_ARCH.deb" test -f "$deb"
depends=$(dpkg-deb -f "$deb" Depends)
# dpkg-shlibdeps names the libraries the binary links: the C library and the decoders at least.
for library in libc6 libre2 libarchive13 libzstd1; do
  check "Depends names $library ($depends)" grep -q "\b$library\b" <<<"$depends"
done
dpkg-deb -c "$deb" | awk '{print $NF}' >"$scratch/files"
for file in ./usr/bin/faultline ./usr/share/man/man1/faultline.1.gz \
  ./usr/share/bash-completion/completions/faultline ./usr/share/zsh/vendor-completions/_faultline \
  ./usr/share/fish/vendor_completions.d/faultline.fish ./usr/share/doc/faultline/README.md; do
  check "the package holds $file" grep -qx "$file" "$scratch/files"
done

# --- Installed: with apt-get as root, unpacked otherwise. ---
note=""
if [[ $(id -u) != 0 ]]; then
  note="not root: the package was unpacked with dpkg -x, not installed"
elif dpkg -s faultline >/dev/null 2>&1; then
  note="a faultline package is installed already: this one was unpacked with dpkg -x, not installed"
fi
if [[ -z $note ]]; then
  if apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$deb" >"$scratch/apt.log" 2>&1; then
    installed=yes
    prefix=/usr
    check "the installed faultline is the one on PATH" test "$(command -v faultline)" = /usr/bin/faultline
  else
    cat "$scratch/apt.log" >&2
    echo "FAIL: apt-get install $deb" >&2
    exit 1
  fi
else
  dpkg -x "$deb" "$scratch/root"
  prefix=$scratch/root/usr
fi
faultline=$prefix/bin/faultline

# The installed binary diagnoses a sample as its golden file says.
expected=$root/samples/gpu-off-bus.expected.json
"$faultline" diagnose --format json "$root/samples/gpu-off-bus" >"$scratch/diagnose.json" 2>"$scratch/diagnose.err"
code=$?
check "diagnose: exit code $code as the golden file says" test "$code" = "$(jq -r .exit_code "$expected")"
check "diagnose: the top diagnosis as the golden file says" \
  test "$(jq -r '.diagnoses[0].id' "$scratch/diagnose.json")" = "$(jq -r .top.id "$expected")"
check "diagnose: no warning" test ! -s "$scratch/diagnose.err"

# The commands `faultline --help` lists, and those under each (signatures list, ...).
commands_of() { "$faultline" "$@" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p'; }
mapfile -t top_commands < <(commands_of)
check "faultline --help lists commands" test "${#top_commands[@]}" -ge 4

# man renders the page, with a section for every command and no groff warning.
if [[ -n $installed ]]; then
  MANPAGER=cat MANWIDTH=100 man --warnings faultline >"$scratch/man.txt" 2>"$scratch/man.err"
else
  MANPAGER=cat MANWIDTH=100 man --warnings -l "$prefix/share/man/man1/faultline.1.gz" \
    >"$scratch/man.txt" 2>"$scratch/man.err"
fi
check "man faultline: exit code 0" test $? = 0
check "man faultline: no warning ($(head -c 300 "$scratch/man.err"))" test ! -s "$scratch/man.err"
check "man faultline: the NAME line" grep -q "faultline - diagnose failed GPU training jobs" "$scratch/man.txt"
for command in "${top_commands[@]}"; do
  check "man faultline: a section for 'faultline $command'" grep -q "^   faultline $command\$" "$scratch/man.txt"
  while read -r sub; do
    check "man faultline: a section for 'faultline $command $sub'" \
      grep -q "^   faultline $command $sub\$" "$scratch/man.txt"
  done < <(commands_of "$command")
done
check "man faultline: the options of diagnose" grep -q -- "--fail-on" "$scratch/man.txt"

# bash: the installed completion registers, and completes commands, sub-commands, flags and the
# values of a flag.
completion=$prefix/share/bash-completion/completions/faultline
check "bash: complete -p faultline after sourcing the completion" \
  bash -c "source '$completion' && complete -p faultline | grep -q -- '-F _faultline'"
# complete WORDS...: what bash offers for the last of WORDS, one per line, sorted.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _faultline
           printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$completion" faultline "$@"
}
check "bash: faultline di<TAB> offers diagnose" test "$(complete_words di)" = diagnose
check "bash: faultline <TAB> offers every command of --help" \
  test "$(complete_words '')" = "$(printf '%s\n' "${top_commands[@]}" | sort)"
check "bash: faultline signatures l<TAB> offers list and lint" \
  test "$(complete_words signatures l | paste -sd' ')" = "lint list"
check "bash: faultline diagnose --fail<TAB> offers --fail-on" \
  test "$(complete_words diagnose --fail)" = --fail-on
check "bash: faultline diagnose --format j<TAB> offers json and jsonl" \
  test "$(complete_words diagnose --format j | paste -sd' ')" = "json jsonl"
check "bash: faultline scan --hostname <TAB> offers no command (files, by default)" \
  test -z "$(complete_words scan --hostname '')"
check "bash: the hidden completions command is not offered" \
  test -z "$(complete_words co)"

# fish: what `complete -C` offers for a command line, the words only, sorted.
fish_completion=$prefix/share/fish/vendor_completions.d/faultline.fish
fish_words() {
  fish -c 'source $argv[1]; complete -C $argv[2]' "$fish_completion" "$1" | cut -f1 | sort | paste -sd' '
}
if command -v fish >/dev/null; then
  check "fish: faultline di<TAB> offers diagnose" test "$(fish_words 'faultline di')" = diagnose
  check "fish: faultline signatures l<TAB> offers list and lint" \
    test "$(fish_words 'faultline signatures l')" = "lint list"
  check "fish: faultline diagnose --format j<TAB> offers json and jsonl" \
    test "$(fish_words 'faultline diagnose --format j')" = "json jsonl"
else
  note="${note:+$note; }fish not installed: its completion not checked"
fi
# zsh completes only in an interactive shell: the script is checked to parse.
if command -v zsh >/dev/null; then
  check "zsh: the completion parses" zsh -n "$prefix/share/zsh/vendor-completions/_faultline"
else
  note="${note:+$note; }zsh not installed: its completion not checked"
fi

if [[ -n $installed ]]; then
  apt-get remove -y -qq -o DPkg::Lock::Timeout=300 faultline >/dev/null 2>&1
  check "apt-get remove: faultline is gone" test ! -e /usr/bin/faultline
  installed=""
fi
finish "$note"
