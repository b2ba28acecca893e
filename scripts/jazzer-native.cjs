// Makes Jazzer.js's prebuilt libFuzzer addon load on an older glibc (Debian 12: 2.36), and points Jazzer at it.
//
// The addon @jazzer.js/fuzzer 4 ships for linux-x64 is linked against glibc 2.38 and libstdc++ 13, but uses only three
// symbols that older ones lack: `__isoc23_strtol` and `__isoc23_strtoul` (GLIBC_2.38: strtol as C23 reads it, the
// same for libFuzzer's flag values) and `std::ios_base_library_init()` (GLIBCXX_3.4.32: a symbol GCC 13's <iostream>
// only refers to, so that its static objects are set up). This script builds a small shim library that defines the
// three, then a patched copy of the addon (never the one in node_modules) whose references to them carry no version,
// whose two version requirements are marked weak (glibc's loader then only warns under LD_DEBUG when they are
// missing) and which needs the shim, found beside it ($ORIGIN). Both live in a cache folder keyed by the addon's and
// the shim's content, so the work is done once per machine: os.tmpdir()/bodykit-jazzer/<key>/.
//
// Used two ways (docs/fuzzing.md):
// - `node scripts/jazzer-native.cjs` prepares the copy (installing patchelf with apt-get when missing and root) and
//   prints its path; scripts/fuzz-jazzer.mjs runs it before fuzzing.
// - `node --require ./scripts/jazzer-native.cjs …` (or NODE_OPTIONS) makes every `require()` of the addon load the
//   patched copy; without a copy prepared it prepares one (without installing anything).
// Where the original addon loads (a newer glibc, another platform) nothing is patched and nothing is redirected.
'use strict'
const childProcess = require('child_process')
const crypto = require('crypto')
const fs = require('fs')
const Module = require('module')
const os = require('os')
const path = require('path')

const ADDON_NAME = 'fuzzer-' + process.platform + '-' + process.arch + '.node'
const SHIM_NAME = 'libbodykit-jazzer-shim.so'
/** The symbols the shim defines, and the versions the addon requires for them. */
const SHIMMED_SYMBOLS = ['__isoc23_strtol', '__isoc23_strtoul', '_ZSt21ios_base_library_initv']
const SHIMMED_VERSIONS = ['GLIBC_2.38', 'GLIBCXX_3.4.32']
const SHIM_SOURCE = `// Built by bodykit's scripts/jazzer-native.cjs: what Jazzer.js's addon needs of glibc 2.38 and libstdc++ 13.
#include <cstdlib>
#include <iostream> // its static std::ios_base::Init sets up the standard streams the addon may write to
// C23's strtol also reads 0b prefixes; libFuzzer's flags and dictionaries never use them.
extern "C" long __isoc23_strtol (const char *s, char **end, int base) { return std::strtol(s, end, base); }
extern "C" unsigned long __isoc23_strtoul (const char *s, char **end, int base) { return std::strtoul(s, end, base); }
namespace std { void ios_base_library_init () {} }
`

/** The addon as installed: the file @jazzer.js/fuzzer's dist/addon.js requires. */
function originalAddon () {
  const fuzzerDir = path.dirname(require.resolve('@jazzer.js/fuzzer/package.json', { paths: [path.join(__dirname, '..')] }))
  return path.join(fuzzerDir, 'prebuilds', ADDON_NAME)
}

/** Whether the addon loads as it is, asked of a child process (a failed dlopen leaves nothing behind there). */
function loadsAsIs (addon) {
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  const probe = childProcess.spawnSync(process.execPath, ['-e', 'require(process.argv[1])', addon], { env, encoding: 'utf8' })
  return { ok: probe.status === 0, error: (probe.stderr || '').split('\n').find((line) => line.includes('Error')) || '' }
}

function cacheDirFor (addon) {
  const key = crypto.createHash('sha256').update(fs.readFileSync(addon)).update(SHIM_SOURCE).update(SHIMMED_VERSIONS.join()).digest('hex').slice(0, 16)
  return path.join(os.tmpdir(), 'bodykit-jazzer', key)
}

function run (command, args, options) {
  const result = childProcess.spawnSync(command, args, { encoding: 'utf8', ...options })
  if (result.error) throw new Error(command + ': ' + result.error.message)
  if (result.status !== 0) throw new Error(command + ' ' + args.join(' ') + ' failed:\n' + result.stdout + result.stderr)
  return result.stdout
}

function hasCommand (command) {
  return childProcess.spawnSync('sh', ['-c', 'command -v ' + command], { stdio: 'ignore' }).status === 0
}

/** patchelf comes from the distribution (Debian: apt-get install patchelf); installed here only when asked and root. */
function ensurePatchelf (install) {
  if (hasCommand('patchelf')) return
  if (install && process.getuid && process.getuid() === 0 && hasCommand('apt-get')) {
    console.error('jazzer-native: installing patchelf with apt-get')
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    run('apt-get', ['update', '-qq'], { env })
    run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'patchelf'], { env })
    return
  }
  throw new Error('patchelf is needed to patch Jazzer.js\'s addon for this glibc: apt-get install patchelf (then run again)')
}

/**
 * Marks the version requirements named in `names` weak (VER_FLG_WEAK) in an ELF64 little-endian file's
 * .gnu.version_r, in place: the loader then accepts the file where those versions are missing. Returns the names marked.
 */
function weakenVersionNeeds (file, names) {
  const elf = fs.readFileSync(file)
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) throw new Error(file + ' is not an ELF64 little-endian file')
  const sectionAt = Number(elf.readBigUInt64LE(0x28))
  const sectionSize = elf.readUInt16LE(0x3a)
  const sectionCount = elf.readUInt16LE(0x3c)
  const section = (index) => {
    const at = sectionAt + index * sectionSize
    return { type: elf.readUInt32LE(at + 4), offset: Number(elf.readBigUInt64LE(at + 0x18)), link: elf.readUInt32LE(at + 0x28), info: elf.readUInt32LE(at + 0x2c) }
  }
  const marked = []
  for (let index = 0; index < sectionCount; index++) {
    const needs = section(index)
    if (needs.type !== 0x6ffffffe) continue // SHT_GNU_verneed
    const strings = section(needs.link).offset
    const nameAt = (offset) => elf.toString('latin1', strings + offset, elf.indexOf(0, strings + offset))
    let need = needs.offset
    for (let n = 0; n < needs.info; n++) {
      let aux = need + elf.readUInt32LE(need + 8)
      for (let k = 0; k < elf.readUInt16LE(need + 2); k++) {
        const name = nameAt(elf.readUInt32LE(aux + 8))
        if (names.includes(name)) {
          elf.writeUInt16LE(elf.readUInt16LE(aux + 4) | 2, aux + 4)
          marked.push(name)
        }
        aux += elf.readUInt32LE(aux + 12)
      }
      need += elf.readUInt32LE(need + 12)
    }
  }
  fs.writeFileSync(file, elf)
  return marked
}

/**
 * The addon to load: the installed one when it loads as it is, else the patched copy, made now if missing.
 * @param {{ install?: boolean, quiet?: boolean }} options install: may install patchelf with apt-get
 */
function prepareAddon (options = {}) {
  const addon = originalAddon()
  const dir = cacheDirFor(addon)
  const patched = path.join(dir, ADDON_NAME)
  if (fs.existsSync(patched)) return patched
  const probe = loadsAsIs(addon)
  if (probe.ok) return addon
  if (process.platform !== 'linux' || !/GLIBC(XX)?_/.test(probe.error)) throw new Error('Jazzer.js\'s addon does not load: ' + probe.error)
  if (!options.quiet) console.error('jazzer-native: ' + probe.error.trim() + '\njazzer-native: making a patched copy in ' + dir)
  ensurePatchelf(options.install === true)
  // Built in a folder of its own, then renamed: a concurrent or interrupted run never leaves a half-made copy.
  fs.mkdirSync(path.dirname(dir), { recursive: true })
  const work = fs.mkdtempSync(dir + '.tmp-')
  try {
    fs.writeFileSync(path.join(work, 'shim.cc'), SHIM_SOURCE)
    run('g++', ['-shared', '-fPIC', '-O2', '-o', path.join(work, SHIM_NAME), path.join(work, 'shim.cc')])
    const copy = path.join(work, ADDON_NAME)
    fs.copyFileSync(addon, copy)
    run('patchelf', SHIMMED_SYMBOLS.flatMap((symbol) => ['--clear-symbol-version', symbol]).concat(copy))
    const marked = weakenVersionNeeds(copy, SHIMMED_VERSIONS)
    if (marked.length !== SHIMMED_VERSIONS.length) throw new Error('the addon no longer requires ' + SHIMMED_VERSIONS.join(' and ') + ': update scripts/jazzer-native.cjs')
    // patchelf 0.14 mixes up the two changes when given in one call: one call each.
    run('patchelf', ['--set-rpath', '$ORIGIN', copy])
    run('patchelf', ['--add-needed', SHIM_NAME, copy])
    const check = loadsAsIs(copy)
    if (!check.ok) throw new Error('the patched addon does not load either (it may need more than the shim gives): ' + check.error)
    try {
      fs.renameSync(work, dir)
    } catch (err) {
      // Another run made it first.
      if (!fs.existsSync(patched)) throw err
      fs.rmSync(work, { recursive: true, force: true })
    }
  } catch (err) {
    fs.rmSync(work, { recursive: true, force: true })
    throw err
  }
  return patched
}

/** Makes every later `require()` of the installed addon load `replacement`. */
function redirectAddon (replacement) {
  const original = originalAddon()
  if (replacement === original) return
  const loadNative = Module._extensions['.node']
  Module._extensions['.node'] = function loadJazzerAddon (module, filename) {
    return loadNative.call(this, module, path.resolve(filename) === original ? replacement : filename)
  }
}

module.exports = { prepareAddon, redirectAddon }

if (require.main === module) {
  try {
    console.log(prepareAddon({ install: true }))
  } catch (err) {
    console.error('jazzer-native: ' + err.message)
    process.exit(1)
  }
} else if (module.parent?.id === 'internal/preload') {
  // Loaded with --require: the addon of this process is the one that loads.
  redirectAddon(process.env.BODYKIT_JAZZER_ADDON || prepareAddon({ quiet: true }))
}
