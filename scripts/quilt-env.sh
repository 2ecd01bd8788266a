# SPDX-License-Identifier: GPL-2.0
# Source this in a kernel tree prepared by scripts/prepare-tree to edit the
# ABISS series with quilt: quilt push / edit / refresh write to patches/.
# The series is that of the tree in this folder (its Makefile's version:
# series-6.12 in build/6.12/linux), else of $KVER, else of the primary tree
# (the top-level file 'trees').  A patch of this tree alone is named with
# its folder (quilt new 6.12/0030-....patch); see README.
_abiss_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$_abiss_top/scripts/lib/trees.sh"
_abiss_kver=$(sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' Makefile 2> /dev/null |
	head -n 2 | paste -sd.)
tree_known "$_abiss_kver" || _abiss_kver=${KVER:-$(tree_primary)}
export QUILT_PATCHES="$_abiss_top/patches"
export QUILT_SERIES
QUILT_SERIES=$(tree_series "$_abiss_kver")
echo "quilt-env.sh: quilt edits ${QUILT_SERIES#"$_abiss_top"/} and patches/ of $_abiss_top"
quilt() { command quilt --quiltrc "$_abiss_top/scripts/quiltrc" "$@"; }
