# SPDX-License-Identifier: GPL-2.0
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
plan 1
mnt=/mnt/vfat; dir=$mnt/stream
mount_fs vfat $FAT_DEV $mnt; mkdir -p $dir
abissd_start 20MB
rdrt --create 64M --seed 12 $dir/s2
echo 3 > /proc/sys/vm/drop_caches
load_writers $dir
sleep 1
rdrt -a -r 2MB -s 64k -b 8M -v -S 12 -n 32M --status -j $dir/s2 > /tmp/s2.json 2> /tmp/s2.err &
p=$!
true
wait $p
load_stop
cat /tmp/s2.json /tmp/s2.err
cat /tmp/abissd.log
pass x
