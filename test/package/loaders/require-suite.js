// Test runners (Jest, mocha): the three entries by require() from a test file, as a CommonJS app's tests load them.
/* global it */
'use strict'
const { check, checkMulter } = require('./check')

it('require(\'bodykit\')', () => check(require('bodykit'), process.env.LOADER_LABEL + '-require-default'))
it('require(\'bodykit/legacy\')', () => check(require('bodykit/legacy'), process.env.LOADER_LABEL + '-require-legacy'))
it('require(\'bodykit/multer\')', () => { const multer = require('bodykit/multer'); return checkMulter(multer, multer, process.env.LOADER_LABEL + '-require-multer') })
