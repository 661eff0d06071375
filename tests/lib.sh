# Shared by the shell test suites (sourced): `check NAME COMMAND...` counts COMMAND's success as a
# pass and reports a failure by NAME; `finish [NOTE]` prints the counts and fails if any failed.
passed=0
failed=0

check() {
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $name" >&2
  fi
}

finish() {
  echo "$passed passed, $failed failed${1:+ ($1)}"
  test "$failed" = 0
}
