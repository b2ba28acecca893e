// Disk storage under filesystem faults: open, write, close, unlink, fsync and mkdir failing at their Nth call (a fake fs patched in-process), and real ones (a full tmpfs, a read-only mount, a low descriptor limit, a folder the user may not write): an http error to next, no crash, no file, no descriptor left.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it, type TestContext } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import multer from '../../src/multer'
import type { ChildReport } from './fs-child'
import {
  SECOND_CALL_WINDOW_MS, assertNone, eventually, fdsBackTo, fieldPart, filePart, formRequest, listFolder, listenerCounts,
  listenersLeft, makeFolder, multerMiddleware, openFds, playNode, removeStored, seededBytes, sleep, split, summarize, watchProcess,
  type ErrorLike, type Middleware, type Played
} from './harness'

const watch = watchProcess(before, after)
const folders: string[] = []
after(() => { for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true }) })

function folderFor (name: string): string {
  const folder = makeFolder(name)
  folders.push(folder)
  return folder
}

// ---------------------------------------------------------------------------
// A fake fs: the Nth call of a method, on a path in the upload folder or a descriptor opened there, fails with a code.
// ---------------------------------------------------------------------------

type Method = 'open' | 'write' | 'close' | 'unlink' | 'fsync' | 'mkdir'
const METHODS: readonly Method[] = ['open', 'write', 'close', 'unlink', 'fsync']
const CODES = ['ENOSPC', 'EMFILE', 'EACCES', 'ENOENT'] as const

interface Injection {
  method: Method
  code: string
  /** The call that fails (1-based); with `persistent`, it and every later one. */
  nth: number
  persistent: boolean
}

interface FakeFs {
  /** Calls seen per method (on the upload folder's paths and descriptors only). */
  counts: Record<Method, number>
  /** How many calls the injection failed. */
  injected: () => number
  /** Files whose unlink was failed (they are still there, as after a real EACCES). */
  kept: string[]
  restore: () => void
}

type Callback = (err: NodeJS.ErrnoException | null, ...results: unknown[]) => void
type FsFunction = (...args: unknown[]) => unknown
const mutableFs = fs as unknown as Record<string, FsFunction>
const originals: Record<string, FsFunction> = {}
for (const name of ['open', 'write', 'writev', 'close', 'unlink', 'fsync', 'mkdirSync']) originals[name] = mutableFs[name]

/**
 * Patches fs's callback methods (which fs.WriteStream calls through the fs module, as bodykit's sinks and multer's
 * diskStorage do). A failed open opens nothing; a failed write writes nothing; a failed close still closes, as on
 * Linux (the descriptor is released whatever close returns); a failed unlink leaves the file (ENOENT: removes it, as
 * if someone else had).
 */
function patchFs (folder: string, injection: Injection | null): FakeFs {
  const descriptors = new Set<number>()
  const counts: Record<Method, number> = { open: 0, write: 0, close: 0, unlink: 0, fsync: 0, mkdir: 0 }
  const kept: string[] = []
  let injected = 0
  const mine = (p: unknown): boolean => typeof p === 'string' && p.startsWith(folder)
  const hit = (method: Method): NodeJS.ErrnoException | null => {
    const n = ++counts[method]
    if (injection === null || injection.method !== method || (injection.persistent ? n < injection.nth : n !== injection.nth)) return null
    injected++
    return Object.assign(new Error(`${injection.code}: ${method} failed (injected, call ${n})`), { code: injection.code, syscall: method })
  }
  const lastIsCallback = (args: unknown[]): Callback => args[args.length - 1] as Callback
  mutableFs.open = function open (this: unknown, ...args: unknown[]) {
    if (!mine(args[0])) return originals.open.apply(this, args)
    const callback = lastIsCallback(args)
    const err = hit('open')
    if (err !== null) return process.nextTick(callback, err)
    return originals.open.apply(this, [...args.slice(0, -1), (e: NodeJS.ErrnoException | null, fd: number) => {
      if (e === null) descriptors.add(fd)
      callback(e, fd)
    }])
  }
  const onDescriptor = (name: string, method: Method, real: (callback: Callback, args: unknown[], err: NodeJS.ErrnoException) => void) => function patched (this: unknown, ...args: unknown[]) {
    if (!descriptors.has(args[0] as number)) return originals[name].apply(this, args)
    if (name === 'close') descriptors.delete(args[0] as number)
    const err = hit(method)
    if (err === null) return originals[name].apply(this, args)
    real(lastIsCallback(args), args, err)
  }
  const failAtOnce = (callback: Callback, _args: unknown[], err: NodeJS.ErrnoException): void => { process.nextTick(callback, err) }
  mutableFs.write = onDescriptor('write', 'write', failAtOnce)
  mutableFs.writev = onDescriptor('writev', 'write', failAtOnce)
  mutableFs.fsync = onDescriptor('fsync', 'fsync', failAtOnce)
  mutableFs.close = onDescriptor('close', 'close', (callback, args, err) => { originals.close.call(fs, args[0], () => { callback(err) }) })
  mutableFs.unlink = function unlink (this: unknown, ...args: unknown[]) {
    if (!mine(args[0])) return originals.unlink.apply(this, args)
    const callback = lastIsCallback(args)
    const err = hit('unlink')
    if (err === null) return originals.unlink.apply(this, args)
    if (err.code === 'ENOENT') return originals.unlink.call(fs, args[0], () => { callback(err) })
    kept.push(args[0] as string)
    process.nextTick(callback, err)
  }
  mutableFs.mkdirSync = function mkdirSync (this: unknown, ...args: unknown[]) {
    if (mine(args[0])) {
      const err = hit('mkdir')
      if (err !== null) throw err
    }
    return originals.mkdirSync.apply(this, args)
  }
  return { counts, injected: () => injected, kept, restore: () => { Object.assign(mutableFs, originals) } }
}

/** The errno an error carries, itself or as its cause. */
function codeOf (err: unknown): string | undefined {
  const e = err as ErrorLike | undefined
  return e?.code ?? e?.cause?.code
}

interface DiskTarget {
  name: string
  /** multipart()'s storage error (500 multipart.storage.failed with the fs error as cause), or multer's (the fs error itself). */
  style: 'multipart' | 'multer'
  make: (folder: string) => Middleware
}

const DISK_TARGETS: DiskTarget[] = [
  { name: 'default multipart() disk', style: 'multipart', make: (directory) => bodykit.multipart({ files: { storage: 'disk', directory } }) as unknown as Middleware },
  { name: 'legacy multipart() disk', style: 'multipart', make: (directory) => legacy.multipart({ files: { storage: 'disk', directory } }) as unknown as Middleware },
  { name: 'bodykit/multer diskStorage', style: 'multer', make: (folder) => multerMiddleware('disk', folder) },
  { name: 'bodykit/multer diskStorage({ flush: true })', style: 'multer', make: (folder) => multer({ storage: multer.diskStorage({ destination: folder, flush: true }) }).any() as unknown as Middleware }
]

/** Whether `err` is the storage error a target gives for a filesystem error of `code`. */
function storageErrorProblem (target: Pick<DiskTarget, 'style'>, err: unknown, code: string): string | null {
  if (err === undefined || err === null) return 'no error'
  const e = err as ErrorLike
  const status = e.status ?? e.statusCode ?? 500
  if (status < 500 || status > 599) return `status ${status}, not a 5xx: ${summarize(err)}`
  if (target.style === 'multipart' && e.type !== 'multipart.storage.failed') return `type ${String(e.type)}, not multipart.storage.failed: ${summarize(err)}`
  if (codeOf(err) !== code) return `code ${String(codeOf(err))} (cause ${String(e.cause?.code)}), not ${code}: ${summarize(err)}`
  return null
}

const FILE = 100 * 1024
/** A form with two files, whole; and the same form cut short while its second file arrives (the first is stored, then removed). */
const COMPLETE = formRequest([fieldPart('name', 'fs'), filePart('first', 'a.bin', seededBytes(FILE, 21)), filePart('second', 'b.bin', seededBytes(FILE, 22))])
const firstPartsLength = fieldPart('name', 'fs').length + filePart('first', 'a.bin', seededBytes(FILE, 21)).length
/** The step (1-based) at which the aborted script's source fails: after the first file and 40 KB of the second arrived. */
const ABORT_STEP = split(Buffer.alloc(firstPartsLength + 40_000), 32 * 1024).length + 1

interface Script { name: string, fault: Parameters<typeof playNode>[3] }
const SCRIPTS: Script[] = [
  { name: 'a complete upload', fault: null },
  { name: 'an upload aborted while its second file arrives', fault: { k: ABORT_STEP, mode: 'aborted' } }
]

/** Plays one upload with the fake fs; returns the run, the fake's record, and what it left. */
async function playWithFakeFs (mw: Middleware, folder: string, script: Script, injection: Injection | null): Promise<{ played: Played, fake: FakeFs }> {
  const fake = patchFs(folder, injection)
  try {
    const played = await playNode(mw, COMPLETE, 'incoming', script.fault)
    await sleep(SECOND_CALL_WINDOW_MS)
    return { played, fake }
  } finally {
    fake.restore()
  }
}

describe('fs calls failing at their Nth call (a fake fs, patched in-process)', () => {
  for (const target of DISK_TARGETS) {
    for (const script of SCRIPTS) {
      it(`${target.name}, ${script.name}: each of open, write, close, unlink, fsync failing (ENOSPC, EMFILE, EACCES, ENOENT) at each call, then from the first call on`, async (t) => {
        const mark = watch.mark()
        const folder = folderFor('fakefs')
        const mw = target.make(folder)
        const fds = openFds()
        const violations: string[] = []
        // The reference run counts the calls (SQLite's "fail the Nth call" style).
        const reference = await playWithFakeFs(mw, folder, script, null)
        if (script.fault === null && reference.played.state.err !== undefined) violations.push(`reference run failed: ${summarize(reference.played.state.err)}`)
        removeStored(reference.played.handedOn())
        await eventually(() => listFolder(folder).length === 0)
        const injections: Injection[] = []
        for (const method of METHODS) {
          for (const code of CODES) {
            for (let nth = 1; nth <= reference.fake.counts[method]; nth++) injections.push({ method, code, nth, persistent: false })
            if (reference.fake.counts[method] > 0) injections.push({ method, code, nth: 1, persistent: true })
          }
        }
        for (const injection of injections) {
          const where = `${injection.method} ${injection.code} at call ${injection.nth}${injection.persistent ? ' and after' : ''}`
          const { played, fake } = await playWithFakeFs(mw, folder, script, injection)
          if (played.thrown !== undefined) violations.push(`${where}: the middleware threw ${summarize(played.thrown)}`)
          if (!played.settled) {
            violations.push(`${where}: never settled`)
            continue
          }
          if (played.state.calls !== 1) violations.push(`${where}: next called ${played.state.calls} times`)
          const err = played.state.err
          if (fake.injected() > 0) {
            if (script.fault === null && injection.method !== 'unlink') {
              const problem = storageErrorProblem(target, err, injection.code)
              if (problem !== null) violations.push(`${where}: ${problem}`)
            } else if (err === undefined || ((err as ErrorLike).type !== 'request.aborted' && storageErrorProblem(target, err, injection.code) !== null)) {
              violations.push(`${where}: neither request.aborted nor the storage error: ${summarize(err)}`)
            }
          }
          if (err === undefined) removeStored(played.handedOn())
          for (const { name, emitter, before: counts } of played.listeners) {
            const left = listenersLeft(counts, listenerCounts(emitter))
            if (left.length > 0) violations.push(`${where}: listeners left on the ${name}: ${left.join(', ')}`)
          }
          // Removed before next(err) (docs/multipart.md, Cleanup): checked at once. Files whose unlink the fake failed are
          // still there, as after a real failure; the others must be gone.
          const kept = new Set(fake.kept.map((p) => path.basename(p)))
          const left = listFolder(folder).filter((name) => !kept.has(name))
          if (left.length > 0) violations.push(`${where}: files left: ${left.length}`)
          for (const name of listFolder(folder)) fs.rmSync(path.join(folder, name), { force: true })
          const now = await fdsBackTo(fds)
          if (now > fds) violations.push(`${where}: descriptors ${now}, ${fds} before`)
        }
        for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
        t.diagnostic(`${injections.length} injected faults; calls in the reference run: ${JSON.stringify(reference.fake.counts)}`)
        assertNone(violations, 'violations')
      })
    }
  }

  it('bodykit/multer diskStorage({ destination }) whose mkdir fails (EACCES, ENOSPC, ENOENT, EMFILE): the error is thrown when the storage is made, not later', () => {
    const mark = watch.mark()
    const folder = folderFor('mkdir')
    for (const code of CODES) {
      const fake = patchFs(folder, { method: 'mkdir', code, nth: 1, persistent: true })
      try {
        assert.throws(() => multer.diskStorage({ destination: path.join(folder, 'uploads') }), (err: ErrorLike) => err.code === code)
        assert.throws(() => multer({ dest: path.join(folder, 'uploads') }), (err: ErrorLike) => err.code === code)
      } finally {
        fake.restore()
      }
    }
    assert.deepEqual(watch.since(mark), [])
  })
})

// ---------------------------------------------------------------------------
// Real faults: the kernel's own errors.
// ---------------------------------------------------------------------------

interface Mount { dir: string, reason: string | null }

/** Mounts a tmpfs (as root); `reason` says why not when it cannot. */
function mountTmpfs (options: string): Mount {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-faults-mount-'))
  if (process.getuid?.() !== 0) return { dir, reason: 'not root: cannot mount a tmpfs' }
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' })
    return { dir, reason: null }
  } catch (err) {
    return { dir, reason: `mount -t tmpfs -o ${options} failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}` }
  }
}

function unmount (mount: Mount): void {
  if (mount.reason === null) execFileSync('umount', [mount.dir], { stdio: 'pipe' })
  fs.rmSync(mount.dir, { recursive: true, force: true })
}

/** Free blocks of the filesystem under `dir`. */
function freeBlocks (dir: string): number {
  return fs.statfsSync(dir).bfree
}

/** Uploads `body` through `mw` in-process; checks the storage error for `code`, the folder, descriptors and the process. */
async function uploadExpectingStorageError (target: Pick<DiskTarget, 'style'>, mw: Middleware, folder: string, body: ReturnType<typeof formRequest>, code: string): Promise<string[]> {
  const violations: string[] = []
  const fds = openFds()
  const played = await playNode(mw, body, 'incoming', null)
  if (!played.settled) return ['never settled']
  await sleep(SECOND_CALL_WINDOW_MS)
  if (played.state.calls !== 1) violations.push(`next called ${played.state.calls} times`)
  const problem = storageErrorProblem(target, played.state.err, code)
  if (problem !== null) violations.push(problem)
  if (played.state.err === undefined) removeStored(played.handedOn())
  // Removed before next(err) (docs/multipart.md, Cleanup): checked at once.
  if (listFolder(folder).length > 0) violations.push(`files left: ${listFolder(folder).join(', ')}`)
  for (const name of listFolder(folder)) fs.rmSync(path.join(folder, name), { force: true })
  const now = await fdsBackTo(fds)
  if (now > fds) violations.push(`descriptors ${now}, ${fds} before`)
  return violations
}

const REAL_TARGETS = DISK_TARGETS.filter((target) => target.name.startsWith('default') || target.name === 'bodykit/multer diskStorage')

describe('real filesystem faults', () => {
  let full: Mount
  let readOnly: Mount
  before(() => {
    full = mountTmpfs('size=64k')
    readOnly = mountTmpfs('ro,size=64k')
  })
  // Always unmounted, whatever the tests did.
  after(() => {
    unmount(full)
    unmount(readOnly)
  })

  for (const target of REAL_TARGETS) {
    it(`${target.name}: ENOSPC from a 64 KiB tmpfs, a file larger than the space and a filesystem already full: 5xx, nothing left, the blocks given back`, async (t) => {
      if (full.reason !== null) return t.skip(full.reason)
      const mark = watch.mark()
      const violations: string[] = []
      const folder = path.join(full.dir, 'uploads-' + target.style)
      fs.mkdirSync(folder)
      const mw = target.make(folder)
      const free = freeBlocks(full.dir)
      const large = formRequest([fieldPart('name', 'big'), filePart('first', 'big.bin', seededBytes(256 * 1024, 31))])
      violations.push(...(await uploadExpectingStorageError(target, mw, folder, large, 'ENOSPC')).map((v) => `larger than the space: ${v}`))
      // Blocks of a file unlinked while open are only freed at its close: all of them back means closed, then unlinked.
      if (!(await eventually(() => freeBlocks(full.dir) >= free))) violations.push(`larger than the space: ${free - freeBlocks(full.dir)} blocks not given back`)
      const filler = path.join(full.dir, 'filler')
      try {
        fs.writeFileSync(filler, Buffer.alloc(1024 * 1024))
      } catch {
        // ENOSPC: the filler took what was left, which is the point.
      }
      const small = formRequest([fieldPart('name', 'small'), filePart('first', 'small.bin', seededBytes(8 * 1024, 32))])
      violations.push(...(await uploadExpectingStorageError(target, mw, folder, small, 'ENOSPC')).map((v) => `filesystem full: ${v}`))
      fs.rmSync(filler, { force: true })
      for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
      assertNone(violations, 'violations')
    })

    it(`${target.name}: EROFS from a read-only mount: 5xx, nothing left`, async (t) => {
      if (readOnly.reason !== null) return t.skip(readOnly.reason)
      const mark = watch.mark()
      const body = formRequest([fieldPart('name', 'ro'), filePart('first', 'ro.bin', seededBytes(8 * 1024, 33))])
      // diskStorage({ destination: string }) makes its folder, which a read-only mount refuses: a function chooses it instead.
      const mw = target.style === 'multer'
        ? multer({ storage: multer.diskStorage({ destination: (_req, _file, callback) => { callback(null, readOnly.dir) } }) }).any() as unknown as Middleware
        : target.make(readOnly.dir)
      const violations = await uploadExpectingStorageError(target, mw, readOnly.dir, body, 'EROFS')
      for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
      assertNone(violations, 'violations')
    })

    it(`${target.name}: ENOENT from an upload folder that does not exist: 5xx, nothing left`, async () => {
      const mark = watch.mark()
      const parent = folderFor('enoent')
      const missing = path.join(parent, 'missing')
      const body = formRequest([fieldPart('name', 'enoent'), filePart('first', 'x.bin', seededBytes(8 * 1024, 34))])
      const mw = target.style === 'multer'
        ? multer({ storage: multer.diskStorage({ destination: (_req, _file, callback) => { callback(null, missing) } }) }).any() as unknown as Middleware
        : target.make(missing)
      const violations = await uploadExpectingStorageError(target, mw, parent, body, 'ENOENT')
      for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
      assertNone(violations, 'violations')
    })
  }

  it('bodykit/multer diskStorage({ destination }) on a read-only mount: mkdir\'s error is thrown when the storage is made', (t) => {
    if (readOnly.reason !== null) return t.skip(readOnly.reason)
    // Node's recursive mkdir reports EROFS as ENOENT (it walks up to the mount's root and reports the first failure).
    assert.throws(() => multer.diskStorage({ destination: path.join(readOnly.dir, 'uploads') }), (err: ErrorLike) => err.code === 'EROFS' || err.code === 'ENOENT')
  })

  /** Runs fs-child.ts; resolves with its report. */
  function runChild (t: TestContext, scenario: 'emfile' | 'eacces', folder: string, target: 'multipart' | 'multer', asNobody: boolean): Promise<ChildReport | null> {
    return new Promise((resolve) => {
      const child = path.join(__dirname, 'fs-child.ts')
      const options = { cwd: path.join(__dirname, '..', '..'), timeout: 60_000, ...(asNobody ? { uid: 65534, gid: 65534 } : {}) }
      execFile(process.execPath, ['--import', 'tsx', child, scenario, folder, target], options, (err, stdout, stderr) => {
        const line = stdout.trim().split('\n').pop() ?? ''
        try {
          const report = JSON.parse(line) as ChildReport & { crashed?: string }
          if (report.crashed !== undefined) assert.fail(`the child crashed: ${report.crashed}`)
          resolve(report)
        } catch {
          t.skip(`the child could not run${asNobody ? ' as uid 65534' : ''}: ${String(err ?? '').slice(0, 200)} ${stderr.slice(0, 300)}`)
          resolve(null)
        }
      })
    })
  }

  /** What a child's report must show: every upload settled once, successes or the storage error of `code` (at least one), nothing left. */
  function checkReport (report: ChildReport, style: DiskTarget['style'], code: string): string[] {
    const violations: string[] = []
    let met = 0
    for (const [i, outcome] of report.outcomes.entries()) {
      if (!outcome.settled) violations.push(`upload ${i}: never settled`)
      else if (outcome.calls !== 1) violations.push(`upload ${i}: next called ${outcome.calls} times`)
      if (outcome.status === 200) continue
      if (outcome.code === code && outcome.status !== null && outcome.status >= 500) met++
      else violations.push(`upload ${i}: ${outcome.status} ${outcome.code}, not 200 or a 5xx ${code} (${style})`)
    }
    if (met === 0) violations.push(`no upload met ${code}: the fault was not exercised`)
    for (const line of report.uncaught) violations.push(`uncaught in the child: ${line}`)
    if (report.left.length > 0) violations.push(`files left: ${report.left.length}`)
    if (report.fdsAfter > report.fdsBefore) violations.push(`descriptors ${report.fdsAfter}, ${report.fdsBefore} before`)
    return violations
  }

  for (const target of ['multipart', 'multer'] as const) {
    it(`${target === 'multipart' ? 'multipart() disk' : 'bodykit/multer diskStorage'}: EMFILE from a descriptor limit just above what is open (prlimit), 40 uploads at once in a child process`, async (t) => {
      if (!fs.existsSync('/usr/bin/prlimit') && !fs.existsSync('/bin/prlimit')) return t.skip('prlimit is not installed')
      const folder = folderFor('emfile')
      const report = await runChild(t, 'emfile', folder, target, false)
      if (report === null) return
      assertNone(checkReport(report, target, 'EMFILE'), 'violations')
    })

    it(`${target === 'multipart' ? 'multipart() disk' : 'bodykit/multer diskStorage'}: EACCES from a folder the user may not write (a child process as uid 65534)`, async (t) => {
      if (process.getuid?.() !== 0) return t.skip('not root: cannot start a child as another user')
      const folder = folderFor('eacces')
      fs.chmodSync(folder, 0o755)
      const report = await runChild(t, 'eacces', folder, target, true)
      if (report === null) return
      const violations = checkReport(report, target, 'EACCES')
      if (target === 'multer' && report.creationError !== 'EACCES') violations.push(`diskStorage({ destination }) under it: ${String(report.creationError)}, not EACCES thrown when made`)
      assertNone(violations, 'violations')
    })
  }
})
