# SPDX-License-Identifier: GPL-2.0
# abissd and rdrt are in the guest's PATH, answer --help with exit 0 and a
# usage line, and rdrt's test pattern round-trips through a file.
. /abiss/uml-test/lib/tap.sh

plan 5
for prog in abissd rdrt; do
	out=$($prog --help 2>&1)
	is "$?" 0 "$prog --help exits 0"
	case "$out" in
	*"
 $prog [options]"*) pass "$prog --help prints its usage line" ;;
	*) fail "$prog --help prints its usage line"; diag "$out" ;;
	esac
done
check "rdrt --create then --verify" \
	sh -c 'rdrt --create 1M --seed 3 /tmp/tools-help.dat &&
		rdrt --verify --seed 3 /tmp/tools-help.dat && rm /tmp/tools-help.dat'
done_testing
