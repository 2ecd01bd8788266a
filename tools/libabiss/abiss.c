// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libabiss - ABISS guaranteed-rate file reads for applications.  See
 * abiss.h and libabiss(3).
 *
 * The ABISS_FILE reader keeps one read unit of data in user space, as stdio
 * keeps a buffer, so that the kernel sees reads of the size the stream was
 * started with whatever sizes the application asks for.
 */
/*
 * The ABI's offsets are int64_t: lseek() must take them whole on a 32-bit
 * system too, whatever the build's flags say.
 */
#undef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <abiss/abiss.h>

_Static_assert(sizeof(off_t) == sizeof(int64_t), "lseek() takes 64-bit offsets");

struct abiss_file {
	int fd;
	uint32_t read_unit;
	unsigned char *buf;	/* one read unit */
	size_t len;		/* bytes of @buf that hold data */
	size_t off;		/* of which the caller has had these */
	int64_t pos;		/* file offset of the next byte for the caller */
	int eof;
	int error;
};

int abiss_start(int fd, uint64_t rate, uint64_t buffer, uint32_t read_unit, uint32_t flags)
{
	struct abiss_start a = {
		.size = sizeof(a),
		.flags = flags,
		.rate = rate,
		.buffer = buffer,
		.read_unit = read_unit,
	};

	return ioctl(fd, ABISS_IOC_START, &a) ? -1 : 0;
}

int abiss_stop(int fd)
{
	return ioctl(fd, ABISS_IOC_STOP) ? -1 : 0;
}

int abiss_position(int fd, uint64_t pos)
{
	return ioctl(fd, ABISS_IOC_POSITION, &pos) ? -1 : 0;
}

int abiss_status(int fd, struct abiss_status *st)
{
	if (!st) {
		errno = EINVAL;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, ABISS_IOC_STATUS, st) ? -1 : 0;
}

const char *abiss_strerror(int errnum)
{
	switch (errnum) {
	case ESRCH:
		return "no admission daemon is running";
	case ENOSPC:
		return "the device's capacity is reserved";
	case EDQUOT:
		return "over your rate, stream or buffer limit";
	case ENOMEM:
		return "the buffer is over the locked-memory limit, or out of memory";
	case EACCES:
	case EPERM:
		return "not allowed to stream";
	case ETIMEDOUT:
		return "abissd did not answer";
	case EBUSY:
		return "a stream is already running on this file";
	case ECANCELED:
		return "the stream was stopped before it started";
	case ENOTTY:
		return "this file system does not support ABISS";
	case EOPNOTSUPP:
		return "this file system cannot map the file's blocks";
	case ENODATA:
		return "no stream on this file";
	case EBADF:
		return "the file is not open for reading";
	case EINVAL:
		return "bad rate, buffer or read unit, or not a regular file";
	}
	return strerror(errnum);
}

const char *abiss_end_reason(uint32_t reason)
{
	static const char *const names[] = {
		[ABISS_END_NONE] = "no reason",
		[ABISS_END_STOPPED] = "stopped",
		[ABISS_END_CLOSED] = "file closed",
		[ABISS_END_TRUNCATED] = "file truncated",
		[ABISS_END_UNMOUNTED] = "file system unmounted",
		[ABISS_END_ERROR] = "refill error",
		[ABISS_END_ADMIN] = "stopped by abissd",
	};

	if (reason < sizeof(names) / sizeof(names[0]))
		return names[reason];
	return "unknown reason";
}

/* Free @f, close its file, and leave errno as it was. */
static void discard(ABISS_FILE *f)
{
	int e = errno;

	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	free(f);
	errno = e;
}

ABISS_FILE *abiss_fopen(const char *path, const char *mode, uint64_t rate, uint64_t buffer)
{
	ABISS_FILE *f;

	if (!path || !mode || !rate || (strcmp(mode, "r") && strcmp(mode, "rb"))) {
		errno = EINVAL;
		return NULL;
	}
	if (!buffer)
		buffer = ABISS_DEFAULT_BUFFER(rate);
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->fd = -1;
	f->read_unit = buffer < ABISS_DEFAULT_READ_UNIT ? (uint32_t)buffer
							: ABISS_DEFAULT_READ_UNIT;
	f->buf = malloc(f->read_unit);
	if (!f->buf)
		goto fail;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0 || abiss_start(f->fd, rate, buffer, f->read_unit, 0))
		goto fail;
	return f;
fail:
	discard(f);
	return NULL;
}

/*
 * Read one read unit into @dst, going on after short reads and EINTR until
 * it is full, the file ends (eof set) or a read fails (error set).
 */
static size_t read_unit(ABISS_FILE *f, unsigned char *dst)
{
	size_t got = 0;
	ssize_t n;

	while (got < f->read_unit) {
		n = read(f->fd, dst + got, f->read_unit - got);
		if (n > 0) {
			got += (size_t)n;
		} else if (n == 0) {
			f->eof = 1;
			break;
		} else if (errno != EINTR) {
			f->error = 1;
			break;
		}
	}
	return got;
}

size_t abiss_fread(void *ptr, size_t size, size_t nmemb, ABISS_FILE *f)
{
	unsigned char *dst = ptr;
	size_t total, done = 0, n;

	if (!ptr || !f) {
		errno = EINVAL;
		if (f)
			f->error = 1;
		return 0;
	}
	if (__builtin_mul_overflow(size, nmemb, &total)) {
		errno = EOVERFLOW;
		f->error = 1;
		return 0;
	}
	if (!total)
		return 0;
	while (done < total) {
		if (f->off < f->len) {
			n = f->len - f->off < total - done ? f->len - f->off : total - done;
			memcpy(dst + done, f->buf + f->off, n);
			f->off += n;
		} else if (f->eof || f->error) {
			break;
		} else if (total - done >= f->read_unit) {
			n = read_unit(f, dst + done);	/* straight to the caller */
		} else {
			f->len = read_unit(f, f->buf);
			f->off = 0;
			continue;
		}
		done += n;
		f->pos += (int64_t)n;
	}
	return done / size;
}

int abiss_fseek(ABISS_FILE *f, int64_t offset, int whence)
{
	int64_t to;

	if (!f)
		goto inval;
	switch (whence) {
	case SEEK_SET:
		to = lseek(f->fd, offset, SEEK_SET);
		break;
	case SEEK_CUR:
		if (__builtin_add_overflow(f->pos, offset, &to) || to < 0)
			goto inval;
		to = lseek(f->fd, to, SEEK_SET);
		break;
	case SEEK_END:
		to = lseek(f->fd, offset, SEEK_END);
		break;
	default:
		goto inval;
	}
	if (to < 0)
		return -1;
	f->pos = to;
	f->len = 0;
	f->off = 0;
	f->eof = 0;
	return abiss_position(f->fd, (uint64_t)to);
inval:
	errno = EINVAL;
	return -1;
}

int64_t abiss_ftell(ABISS_FILE *f)
{
	if (!f) {
		errno = EINVAL;
		return -1;
	}
	return f->pos;
}

int abiss_feof(ABISS_FILE *f)
{
	return f ? f->eof : 0;
}

int abiss_ferror(ABISS_FILE *f)
{
	return f ? f->error : 0;
}

void abiss_clearerr(ABISS_FILE *f)
{
	if (f) {
		f->eof = 0;
		f->error = 0;
	}
}

int abiss_fileno(ABISS_FILE *f)
{
	if (!f) {
		errno = EBADF;
		return -1;
	}
	return f->fd;
}

int abiss_fstatus(ABISS_FILE *f, struct abiss_status *st)
{
	if (!f) {
		errno = EINVAL;
		return -1;
	}
	return abiss_status(f->fd, st);
}

int abiss_fclose(ABISS_FILE *f)
{
	int ret = 0, e = 0;

	if (!f) {
		errno = EINVAL;
		return EOF;
	}
	if (abiss_stop(f->fd) && errno != ENODATA) {
		e = errno;
		ret = EOF;
	}
	if (close(f->fd) && !ret) {
		e = errno;
		ret = EOF;
	}
	f->fd = -1;
	discard(f);
	if (ret)
		errno = e;
	return ret;
}
