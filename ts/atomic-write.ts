/**
 * Every file fedmix writes (Node): written atomically, so that a crash, a
 * SIGKILL or a full disk leaves either the old file or the new one, never a
 * file cut short. The bytes go to a temporary file in the same directory,
 * which is flushed to disk (fsync), renamed over the target (atomic on one
 * file system), and the directory is flushed so that the rename survives a
 * power cut too.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';

export interface AtomicWriteOptions {
  /** the file's permissions when it is created (default 0o666, less the umask) */
  mode?: number;
}

/** A temporary name beside `path`: hidden, unique to this process and call. */
function temporaryBeside(path: string): { dir: string; tmp: string } {
  const full = resolve(path);
  const dir = dirname(full);
  return { dir, tmp: join(dir, `.${basename(full)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`) };
}

/** An error of the temporary file, as one of the file written (its path and message name that file). */
function asTarget(e: unknown, tmp: string, path: string): unknown {
  if (e instanceof Error && (e as { path?: unknown }).path === tmp) {
    e.message = e.message.split(tmp).join(path);
    (e as { path?: unknown }).path = path;
  }
  return e;
}

/** Flushes a directory's entries (the rename); where directories cannot be opened or flushed (Windows), the rename is all there is. */
function syncDirSync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // EISDIR / EPERM / EINVAL on platforms that do not flush directories
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether `path` is something other than a regular file (a terminal, a pipe, /dev/stdout): written in place, there is nothing to replace. */
function special(path: string): boolean {
  try {
    return !statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Writes `data` to `path` atomically (see the module's comment); synchronous. */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  if (special(path)) return writeFileSync(path, data);
  const { dir, tmp } = temporaryBeside(path);
  try {
    const fd = openSync(tmp, 'wx', options.mode ?? 0o666);
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw asTarget(e, tmp, path);
  }
  syncDirSync(dir);
}

/** Writes `data` to `path` atomically (see the module's comment). */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  if (special(path)) return writeFile(path, data);
  const { dir, tmp } = temporaryBeside(path);
  try {
    const file = await open(tmp, 'wx', options.mode ?? 0o666);
    try {
      await writeFile(file, data);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw asTarget(e, tmp, path);
  }
  let d: FileHandle | undefined;
  try {
    d = await open(dir, 'r');
    await d.sync();
  } catch {
    // as syncDirSync
  } finally {
    await d?.close();
  }
}
