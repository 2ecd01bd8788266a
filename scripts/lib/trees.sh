# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# trees.sh - the Linux trees of the series, as the top-level file 'trees'
# lists them (TREES=FILE reads another: the self-test's).  Sourced by the
# scripts that prepare, build, boot or check a kernel tree, so that none
# names a version itself.
#
#   trees_list          the trees' versions (KVER), the primary first
#   tree_primary        the primary tree (the first line)
#   tree_known KVER     true if KVER is a tree of the file
#   tree_package KVER   the Debian package of its source (linux-source-KVER)
#   tree_pinned KVER    the Debian version of that package the file pins
#   tree_tarball KVER   the tarball the package installs
#   tree_series KVER    its quilt series (TOP/series-KVER; patch names are
#                       relative to TOP/patches)
#   series_names FILE   the patch names a series file lists, in order
#                       (without comments, blank lines and quilt options)
#   tree_build KVER     its build folder, BUILD/KVER (BUILD: default TOP/build)
#   tree_prefix KVER    what its verdicts begin with: nothing for the
#                       primary tree, 'KVER: ' for another
#   tree_select PROG    KVER from the environment, else the primary tree;
#                       exits 2 with 'PROG: cannot ...' if it is no tree
#
# trees_top (the checkout) and trees_file may be set after sourcing it, to
# read another checkout's trees (scripts/share-patches DIR).

trees_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
trees_file=${TREES:-$trees_top/trees}

# trees_lines: the file without comments and blank lines.
trees_lines() {
	sed -e 's/#.*//' "$trees_file" | awk 'NF'
}

trees_list() {
	trees_lines | awk '{ print $1 }'
}

tree_primary() {
	trees_list | head -n 1
}

# tree_field KVER N: the Nth field of KVER's line (compared as strings:
# 6.1 is not 6.10).
tree_field() {
	trees_lines | awk -v k="$1" -v n="$2" '$1 "" == k "" { print $n; exit }'
}

tree_known() {
	[ -n "$1" ] && [ -n "$(tree_field "$1" 1)" ]
}

tree_package() {
	tree_field "$1" 2
}

tree_pinned() {
	tree_field "$1" 3
}

tree_tarball() {
	echo "/usr/src/$(tree_package "$1").tar.xz"
}

tree_series() {
	echo "$trees_top/series-$1"
}

series_names() {
	sed -e 's/#.*//' -e 's/[[:space:]].*//' "$1" | grep -v '^$' || true
}

tree_build() {
	echo "${BUILD:-$trees_top/build}/$1"
}

tree_prefix() {
	[ "$1" = "$(tree_primary)" ] || echo "$1: "
}

tree_select() {
	[ -r "$trees_file" ] || { echo "$1: cannot read '$trees_file': No such file or directory" >&2; exit 2; }
	KVER=${KVER:-$(tree_primary)}
	if ! tree_known "$KVER"; then
		echo "$1: cannot use KVER=$KVER: the trees are $(trees_list | tr '\n' ' ')(file ${trees_file#"$trees_top"/})" >&2
		exit 2
	fi
}

# tree_touched KSRC: the files the series applied in KSRC touches, one a
# line, sorted: what quilt saved under each applied patch's name in
# KSRC/.pc (a name may have a folder: 6.1/0001-....patch).
tree_touched() {
	local p
	[ -f "$1/.pc/applied-patches" ] || return 0
	while IFS= read -r p; do
		(cd "$1/.pc/$p" 2> /dev/null && find . -type f ! -name .timestamp | sed 's|^\./||')
	done < "$1/.pc/applied-patches" | sort -u
}
