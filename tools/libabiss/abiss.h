/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libabiss - ABISS guaranteed-rate file reads for applications.
 *
 * Two levels: a stdio-like reader (ABISS_FILE, abiss_fopen() ...
 * abiss_fclose()) that opens a file, starts a stream on it and reads it in
 * the stream's read unit; and thin wrappers over each ABISS ioctl of
 * <abiss/linux-abiss.h> (the kernel's <linux/abiss.h>) on a file descriptor the caller opened.  Every function
 * reports failure through errno; abiss_strerror() says what an errno means
 * for ABISS.  See libabiss(3).
 */
#ifndef ABISS_H
#define ABISS_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's <linux/abiss.h>, installed with this header. */
#include <abiss/linux-abiss.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * typedef ABISS_FILE - a file open for reading with an ABISS stream on it
 *
 * Opaque; made by abiss_fopen(), freed by abiss_fclose().  One thread at a
 * time may use it.
 */
typedef struct abiss_file ABISS_FILE;

/* The read unit abiss_fopen() asks for, unless the buffer is smaller. */
#define ABISS_DEFAULT_READ_UNIT	(64 * 1024)

/* The largest playout buffer the kernel takes. */
#define ABISS_MAX_BUFFER	(256ULL << 20)

/*
 * The playout buffer abiss_fopen() takes for a @buffer of 0: one second at
 * @rate, at least four default read units, at most ABISS_MAX_BUFFER.
 */
#define ABISS_DEFAULT_BUFFER(rate)					\
	((uint64_t)(rate) < 4 * ABISS_DEFAULT_READ_UNIT ? 4 * ABISS_DEFAULT_READ_UNIT :	\
	 (uint64_t)(rate) > ABISS_MAX_BUFFER ? ABISS_MAX_BUFFER : (uint64_t)(rate))

/**
 * abiss_fopen() - open a file and start a guaranteed-rate stream on it
 * @path: the file, a regular file on a file system that carries ABISS
 * @mode: "r" or "rb"; anything else fails with EINVAL
 * @rate: bytes per second the caller will read, at least 1
 * @buffer: playout buffer in bytes; 0: ABISS_DEFAULT_BUFFER(@rate)
 *
 * The read unit is ABISS_DEFAULT_READ_UNIT, or @buffer if that is smaller.
 * Returns once abissd admitted the stream and the kernel filled the buffer.
 *
 * Return: the open file, or NULL with errno set: EINVAL (a NULL argument,
 * a bad mode, @rate 0), open()'s errno, or ABISS_IOC_START's (ESRCH,
 * ENOSPC, EDQUOT, EACCES, ENOTTY ...: see abiss_strerror()); the file is
 * closed then.
 */
ABISS_FILE *abiss_fopen(const char *path, const char *mode, uint64_t rate, uint64_t buffer);

/**
 * abiss_fread() - read items from an ABISS file
 * @ptr: where to put them
 * @size: bytes per item
 * @nmemb: number of items
 * @f: the file
 *
 * Reads the file in its stream's read unit (an internal buffer of one read
 * unit serves smaller requests), going on after short reads and EINTR.
 *
 * Return: the number of whole items read: 0 at once, flags untouched, when
 * @size or @nmemb is 0.  Fewer than @nmemb: the end of
 * the file (abiss_feof() true) or an error (abiss_ferror() true, errno
 * set; EINVAL for a NULL @ptr or @f, EOVERFLOW if @size * @nmemb does not
 * fit a size_t).
 */
size_t abiss_fread(void *ptr, size_t size, size_t nmemb, ABISS_FILE *f);

/**
 * abiss_fseek() - move the read position and tell the stream
 * @f: the file
 * @offset: bytes, from where @whence says
 * @whence: SEEK_SET, SEEK_CUR (from abiss_ftell()) or SEEK_END
 *
 * Moves the file position, drops what the internal buffer held, clears the
 * end-of-file flag and reports the new position with ABISS_IOC_POSITION so
 * that the kernel refills the playout buffer from there at once rather than
 * at the next read.  The kernel counts a move forward past pages it did
 * not hold as one miss, and a move forward within them as delivered bytes.
 *
 * Offsets are 64-bit (int64_t, not off_t) whatever the caller's
 * _FILE_OFFSET_BITS, so that one library serves both.
 *
 * Return: 0, or -1 with errno set (EINVAL: NULL @f, bad @whence or a
 * negative result; lseek()'s or ABISS_IOC_POSITION's errno: the position
 * may have moved all the same).
 */
int abiss_fseek(ABISS_FILE *f, int64_t offset, int whence);

/**
 * abiss_ftell() - the read position
 * @f: the file
 *
 * Return: the offset of the next byte abiss_fread() returns, or -1 with
 * errno EINVAL for a NULL @f.
 */
int64_t abiss_ftell(ABISS_FILE *f);

/**
 * abiss_feof() - has a read reached the end of the file?
 * @f: the file
 *
 * Return: non-zero if so; 0 if not, or for a NULL @f.
 */
int abiss_feof(ABISS_FILE *f);

/**
 * abiss_ferror() - has a read failed?
 * @f: the file
 *
 * Return: non-zero if so; 0 if not, or for a NULL @f.
 */
int abiss_ferror(ABISS_FILE *f);

/**
 * abiss_clearerr() - clear the end-of-file and error flags
 * @f: the file (NULL: nothing happens)
 */
void abiss_clearerr(ABISS_FILE *f);

/**
 * abiss_fileno() - the file descriptor under an ABISS file
 * @f: the file
 *
 * For the ioctl wrappers below, fstat(), poll() ...  Reading or seeking it
 * directly leaves the ABISS file's position stale.
 *
 * Return: the descriptor, or -1 with errno EBADF for a NULL @f.
 */
int abiss_fileno(ABISS_FILE *f);

/**
 * abiss_fstatus() - the state of the file's stream
 * @f: the file
 * @st: filled in (abiss_fstatus() sets its size field)
 *
 * Return: 0, or -1 with errno set (EINVAL: a NULL argument; ENODATA: the
 * stream was stopped through abiss_fileno()).
 */
int abiss_fstatus(ABISS_FILE *f, struct abiss_status *st);

/**
 * abiss_fclose() - stop the stream and close the file
 * @f: the file, freed whatever the outcome
 *
 * A stream already stopped (ENODATA) is not an error.
 *
 * Return: 0, or EOF with errno set (EINVAL: NULL @f; ABISS_IOC_STOP's or
 * close()'s errno).
 */
int abiss_fclose(ABISS_FILE *f);

/**
 * abiss_start() - ABISS_IOC_START on a file descriptor
 * @fd: a regular file open for reading
 * @rate: bytes per second, at least 1
 * @buffer: playout buffer in bytes, at least @read_unit
 * @read_unit: bytes the caller reads at a time (0: one page)
 * @flags: ABISS_START_* (ABISS_START_MMAP)
 *
 * Return: 0, or -1 with errno set (see abiss_strerror()).
 */
int abiss_start(int fd, uint64_t rate, uint64_t buffer, uint32_t read_unit, uint32_t flags);

/**
 * abiss_stop() - ABISS_IOC_STOP: end the stream on a file descriptor
 * @fd: the file
 *
 * Return: 0, or -1 with errno set (ENODATA: no stream).
 */
int abiss_stop(int fd);

/**
 * abiss_position() - ABISS_IOC_POSITION: report the reader's position
 * @fd: the file
 * @pos: the position in bytes
 *
 * Needed for ABISS_START_MMAP streams; for read() streams the kernel
 * follows the file position at each read, and this moves it at once.
 *
 * Return: 0, or -1 with errno set (ENODATA: no stream; EINVAL: @pos past
 * the largest file size).
 */
int abiss_position(int fd, uint64_t pos);

/**
 * abiss_status() - ABISS_IOC_STATUS: the state of the stream on a file
 * @fd: the file
 * @st: filled in (abiss_status() clears it and sets its size field)
 *
 * Return: 0, or -1 with errno set (EINVAL: NULL @st; ENODATA: no stream).
 */
int abiss_status(int fd, struct abiss_status *st);

/**
 * abiss_strerror() - what an errno from an ABISS call means
 * @errnum: the errno
 *
 * Return: a sentence for the errnos that mean something particular for
 * ABISS (ESRCH: "no admission daemon is running" ...), else strerror().
 * Not thread-safe when it falls back to strerror().
 */
const char *abiss_strerror(int errnum);

/**
 * abiss_end_reason() - why a stream ended, in words
 * @reason: ABISS_END_* (struct abiss_status.end_reason)
 *
 * Return: "stopped", "file closed" ..., or "unknown reason".
 */
const char *abiss_end_reason(uint32_t reason);

#ifdef __cplusplus
}
#endif

#endif /* ABISS_H */
