# SPDX-License-Identifier: GPL-2.0
# Helpers for the abissd tests: abissd with a config file, its control
# socket, streams as other users (asuser, ctlclient: uml-test/prog).
. /abiss/uml-test/lib/stream.sh

ABISSD_CONF=/tmp/abissd.conf
ABISSD_LOG=/tmp/abissd.log
ABISSD_PID=
# A test that bails out leaves no abissd to the next one.
trap 'abissd_stop' EXIT

# abissd_run: abissd on $ABISSD_CONF in the background, $ABISSD_PID; waits
# for its control socket to answer (at most 10 s).
abissd_run() {
	abissd -F -c "$ABISSD_CONF" -p /tmp/abissd.pid -s "$ABISSD_STATUS" \
		-S "$ABISSD_SOCKET" > /dev/null 2>> "$ABISSD_LOG" < /dev/null &
	ABISSD_PID=$!
	await 10 abissd_answers
}

abissd_answers() { ask version 2> /dev/null | grep -q '^ok$'; }

# ctl [UID]: send stdin's requests to abissd (as UID), print the answers.
ctl() {
	if [ $# -gt 0 ]; then
		asuser "$1" "$1" ctlclient "$ABISSD_SOCKET"
	else
		ctlclient "$ABISSD_SOCKET"
	fi
}

# ask REQUEST [UID]: one request line.
ask() { echo "$1" | ctl $2; }

# stream_ids UID: the ids of UID's streams in abissd's status.
stream_ids() {
	ask status | awk -v u="$1" '$1 == "stream" && $6 == u { print $2 }'
}

# streams_of UID: how many streams of UID abissd accounts.
streams_of() { stream_ids "$1" | wc -l; }

# streams_are N UID...: abissd accounts N streams to each UID (for await).
streams_are() {
	_want=$1
	shift
	for _u; do [ "$(streams_of "$_u")" = "$_want" ] || return 1; done
}

# refused ERRNO-TEXT UID RATE FILE: rdrt as UID is refused with that text.
refused() {
	_out=$(asuser "$2" "$2" rdrt -a -r "$3" -n 64k "$4" 2>&1)
	_rc=$?
	case "$_rc:$_out" in
	"1:rdrt: ABISS refused the stream: $1"*) return 0 ;;
	*) echo "exit $_rc: $_out"; return 1 ;;
	esac
}
