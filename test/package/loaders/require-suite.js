// Test runners (Jest, mocha): the five entries by require() from a test file, as a CommonJS app's tests load them.
/* global it */
'use strict'
const { check, checkKoa, checkMulter, checkNest } = require('./check')

it('require(\'bodykit\')', () => check(require('bodykit'), process.env.LOADER_LABEL + '-require-default'))
it('require(\'bodykit/legacy\')', () => check(require('bodykit/legacy'), process.env.LOADER_LABEL + '-require-legacy'))
it('require(\'bodykit/multer\')', () => { const multer = require('bodykit/multer'); return checkMulter(multer, multer, process.env.LOADER_LABEL + '-require-multer') })
it('require(\'bodykit/koa\')', () => { const bodyParser = require('bodykit/koa'); return checkKoa(bodyParser, bodyParser, process.env.LOADER_LABEL + '-require-koa') })
it('require(\'bodykit/nest\')', () => { const nest = require('bodykit/nest'); return checkNest(nest, nest, process.env.LOADER_LABEL + '-require-nest') })
