#!/bin/sh
# SPDX-License-Identifier: MIT
#
# What test_cli.sh and test_cli_example.sh share: t DESCRIPTION STATUS
# PATTERN ARGS... runs "$P ARGS..." and prints one TAP line: ok when it
# exits with STATUS and its output matches PATTERN (grep). Sourced; P is
# the program, n counts the lines.

n=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
t() {
	d=$1 want=$2 pat=$3; shift 3
	"$P" "$@" >"$out" 2>&1
	rc=$?
	n=$((n + 1))
	if [ $rc -eq "$want" ] && grep -q -- "$pat" "$out"; then
		echo "ok $n - $d"
	else
		echo "not ok $n - $d (exit $rc, wanted $want and /$pat/)"
		sed 's/^/# /' "$out"
	fi
}
