# SPDX-License-Identifier: GPL-2.0
# Every program of the project is in the guest's PATH, answers --help with
# exit 0 and its usage line, --version with exit 0, and a bad option with
# exit 2; rdrt's test pattern round-trips through a file.  (The host tests
# check that each --help and its man page name the same options.)
. /abiss/uml-test/lib/tap.sh

progs="abissd rdrt abissctl ptree abiss-run"
plan 21
for prog in $progs; do
	out=$($prog --help 2>&1)
	is "$?" 0 "$prog --help exits 0"
	case "$out" in
	*"
 $prog "*) pass "$prog --help prints its usage line" ;;
	*) fail "$prog --help prints its usage line"; diag "$out" ;;
	esac
	$prog --version > /dev/null 2>&1
	is "$?" 0 "$prog --version exits 0"
	$prog --no-such-option > /dev/null 2>&1
	is "$?" 2 "$prog --no-such-option exits 2"
done
check "rdrt --create then --verify" \
	sh -c 'rdrt --create 1M --seed 3 /tmp/tools-help.dat &&
		rdrt --verify --seed 3 /tmp/tools-help.dat && rm /tmp/tools-help.dat'
done_testing
