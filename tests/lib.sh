# Shared by the shell test suites (sourced): `check NAME COMMAND...` counts COMMAND's success as a
# pass and reports a failure by NAME; `finish [NOTE]` prints the counts and fails if any failed;
# `run` and `not_noisy` run faultline guarded against crashes and hangs.
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

# run NAME ARGS...: runs $faultline with a time limit ($run_timeout seconds, 120 unless set);
# stdout in $scratch/NAME.out, stderr in .err, the exit code in $code. Any crash, hang or
# sanitizer report fails the test.
run() {
  local name=$1
  shift
  timeout "${run_timeout:-120}" "$faultline" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err"
  code=$?
  check "$name: exit code $code is 0, 1 or 2 (not a crash or a hang)" test "$code" -le 2
  check "$name: no crash report" not_noisy "$scratch/$name.err"
}

# not_noisy FILE: FILE holds no crash or sanitizer report.
not_noisy() {
  ! grep -qE 'terminate called|Sanitizer|runtime error:|Segmentation fault|Aborted|core dumped' "$1"
}

# random_bytes SEED COUNT: COUNT bytes that look random but are the same on every run, so that
# a test of binary junk cannot pass or fail by chance (fuzz targets explore the rest).
random_bytes() {
  python3 -c 'import random, sys
generator = random.Random(int(sys.argv[1]))
sys.stdout.buffer.write(generator.randbytes(int(sys.argv[2])))' "$1" "$2"
}
