# SPDX-License-Identifier: GPL-2.0
# Source this in a kernel tree prepared by scripts/prepare-tree to edit the
# ABISS series with quilt: quilt push / edit / refresh write to patches/.
_abiss_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export QUILT_PATCHES="$_abiss_top/patches"
export QUILT_SERIES="$_abiss_top/series"
quilt() { command quilt --quiltrc "$_abiss_top/scripts/quiltrc" "$@"; }
