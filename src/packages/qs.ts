// qs, loaded when a parser that can use it is created: extended forms, and the default entry's simple mode for forms with brackets.
/* eslint-disable @typescript-eslint/no-require-imports */
import type QsModule from 'qs'
import { onFirstUse } from '../dependencies'

export const loadQs = /* @__PURE__ */ onFirstUse((): typeof QsModule => require('qs') as typeof QsModule)
