/**
 * The package as users get it: the tarball of `npm pack` (dist/ must be built), made once per
 * build and shared by the files that install it (builds, arrow-versions, edge-runtimes): it is
 * kept under the system temp folder by a hash of what it packs (package.json, README.md and
 * every file of dist/), so a second file asking for the same build reuses it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface Packed {
  /** the .tgz file */
  tarball: string;
  /** every file in it (package/ stripped), with its size in bytes */
  files: Map<string, number>;
}

/** A hash of what npm pack reads, so that a changed build gets a new tarball. */
function buildHash(): string {
  const hash = createHash('sha256');
  for (const f of ['package.json', 'README.md']) hash.update(f).update(readFileSync(join(REPO, f)));
  for (const f of readdirSync(join(REPO, 'dist'), { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const path = join(f.parentPath, f.name);
    hash.update(path.slice(REPO.length)).update(readFileSync(path));
  }
  return hash.digest('hex').slice(0, 16);
}

/** The packed tarball of the current build: packed now, or the one an earlier file packed from the same bytes. */
export function packedTarball(): Packed {
  if (!existsSync(join(REPO, 'dist', 'index.js'))) throw new Error('dist/ is not built: run `bash scripts/setup.sh` first');
  const dir = join(tmpdir(), 'fedmix-packed', buildHash());
  const listing = join(dir, 'files.json');
  if (!existsSync(listing)) {
    mkdirSync(join(dir, '..'), { recursive: true });
    // packed apart and moved in whole: two files packing at once never see half a tarball
    const fresh = mkdtempSync(`${dir}-`);
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', fresh], { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
    const [packed] = JSON.parse(out) as [{ filename: string; files: { path: string; size: number }[] }];
    renameSync(join(fresh, packed.filename), join(fresh, 'fedmix.tgz'));
    writeFileSync(join(fresh, 'files.json'), JSON.stringify(packed.files.map((f) => [f.path, f.size])));
    try {
      renameSync(fresh, dir);
    } catch {
      // another file moved the same build's tarball in first
      rmSync(fresh, { recursive: true, force: true });
    }
    // earlier builds' tarballs are not asked for again
    const parent = join(dir, '..');
    for (const old of readdirSync(parent)) if (!old.startsWith(basename(dir))) rmSync(join(parent, old), { recursive: true, force: true });
  }
  return { tarball: join(dir, 'fedmix.tgz'), files: new Map(JSON.parse(readFileSync(listing, 'utf8')) as [string, number][]) };
}

/**
 * A fresh project at `app` with the tarball unpacked into node_modules/fedmix, as npm would install
 * it; its dependencies (and its peer, apache-arrow) linked from this repository's node_modules.
 * Returns the package's folder.
 */
export function installPacked(app: string, tarball: string): string {
  const pkg = join(app, 'node_modules', 'fedmix');
  mkdirSync(pkg, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1']);
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; peerDependencies?: Record<string, string> };
  // peer dependencies (apache-arrow) are the user's project's own; here, the repository's copy
  for (const dep of [...Object.keys(manifest.dependencies), ...Object.keys(manifest.peerDependencies ?? {})]) {
    mkdirSync(join(app, 'node_modules', dep, '..'), { recursive: true });
    symlinkSync(join(REPO, 'node_modules', dep), join(app, 'node_modules', dep));
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  return pkg;
}
