// bodykit/hono's middlewares over the Web build's readers (bodykit/web): for Workers, edge runtimes and browsers, with no Node built-in; files stay in memory.
import * as web from '../web'
import type { HonoBuild } from './adapter'

/** @internal */
export const webBuild: HonoBuild = {
  readers: { json: web.readJson, raw: web.readRaw, text: web.readText, urlencoded: web.readUrlencoded, multipart: web.readMultipart } as unknown as HonoBuild['readers'],
  checkOptions: web.checkWebOptions,
  // In memory: nothing to remove.
  releaseFiles: () => {}
}
