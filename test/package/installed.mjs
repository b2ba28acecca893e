// Shared by the package tests: finding a package as Node does, in this repo's node_modules.
import { existsSync } from 'node:fs'
import path from 'node:path'

/** Finds an installed package the way Node does: in node_modules folders from `from` upwards. */
export function findPackage (name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name)
    if (existsSync(path.join(candidate, 'package.json'))) return candidate
    if (dir === path.dirname(dir)) throw new Error('cannot find ' + name + ' from ' + from)
  }
}
