/*
 * peers.mjs - every serializer the benchmarks compare, behind one shape.
 *
 * A peer is { id, label, pkg, available(), load() }. load() imports the
 * library (the child process times it: import + instantiation) and returns
 * an adapter:
 *
 *   register(Class, nested)  called by the workload's model for each class,
 *                            before any instance exists; returns the
 *                            constructor the workload builds with (darmok and
 *                            tanagra return their own; default: Class)
 *   prepare(model, workload) after the model is defined: per-class set-up
 *                            the library needs (extensions, reducers, types)
 *   encode(value)            -> string or Uint8Array
 *   decode(blob, model, workload) -> value (workload.isArray: an array of
 *                            the root class)
 *
 * Each peer is used the way its documentation shows for class instances; no
 * peer gets help the others do not. Peers are loaded only inside a child
 * process, one peer per process, so no class registry is shared.
 */
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { rootOptions } from './workloads.mjs';

const require = createRequire(import.meta.url);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DARMOK_ENTRY = path.join(ROOT, 'js', 'index.cjs');
const DARMOK_PROTOBUF = path.join(ROOT, 'js', 'protobuf.cjs');

function versionOf(pkg) {
  if (pkg === 'node') return process.versions.node;
  if (pkg === 'darmok') return JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
  try {
    return JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

const installed = (pkg) => () => versionOf(pkg) !== null;

/* Plain fields of an instance, for libraries that want a plain object back. */
const fieldsOf = (v) => ({ ...v });

export const PEERS = [
  {
    id: 'json',
    label: 'native JSON (control)',
    pkg: 'node',
    available: () => true,
    async load() {
      return {
        encode: (v) => JSON.stringify(v),
        decode: (s) => JSON.parse(s),
      };
    },
  },
  {
    id: 'v8',
    label: 'v8.serialize (control)',
    pkg: 'node',
    available: () => true,
    async load() {
      const v8 = await import('node:v8');
      return {
        encode: (v) => v8.serialize(v),
        decode: (b) => v8.deserialize(b),
      };
    },
  },
  {
    id: 'darmok',
    label: 'darmok JSON',
    pkg: 'darmok',
    available: () => existsSync(DARMOK_ENTRY),
    async load() {
      const dk = require(DARMOK_ENTRY);
      if (typeof dk.init === 'function') await dk.init();
      return {
        register: (Class, nested) => dk.serializable(Class, nested),
        encode: (v) => dk.encodeEntity(v),
        decode: (s, model, workload) => dk.decodeEntity(s, model.root, rootOptions(workload)),
      };
    },
  },
  {
    id: 'darmok-protobuf',
    label: 'darmok protobuf',
    pkg: 'darmok',
    available: () => existsSync(DARMOK_PROTOBUF) && existsSync(DARMOK_ENTRY),
    async load() {
      const dk = require(DARMOK_ENTRY);
      const pb = require(DARMOK_PROTOBUF);
      if (typeof dk.init === 'function') await dk.init();
      if (typeof pb.init === 'function') await pb.init();
      const serializable = pb.serializable || dk.serializable;
      return {
        register: (Class, nested) => serializable(Class, nested),
        encode: (v) => pb.encodeEntity(v),
        decode: (b, model, workload) => pb.decodeEntity(b, model.root, rootOptions(workload)),
      };
    },
  },
  {
    id: 'tanagra',
    label: 'tanagra-core + tanagra-json',
    pkg: 'tanagra-json',
    available: () => installed('tanagra-core')() && installed('tanagra-json')(),
    async load() {
      const core = require('tanagra-core');
      const tj = require('tanagra-json');
      return {
        register: (Class) => core.serializable()(Class),
        encode: (v) => tj.encodeEntity(v),
        decode: (s) => tj.decodeEntity(s),
      };
    },
  },
  {
    id: 'superjson',
    label: 'superjson (registerClass)',
    pkg: 'superjson',
    available: installed('superjson'),
    async load() {
      const { default: SuperJSON } = await import('superjson');
      return {
        prepare(model) {
          for (const [name, Class] of Object.entries(model.raw)) SuperJSON.registerClass(Class, { identifier: name });
        },
        encode: (v) => SuperJSON.stringify(v),
        decode: (s) => SuperJSON.parse(s),
      };
    },
  },
  {
    id: 'msgpackr',
    label: 'msgpackr (structuredClone + extensions)',
    pkg: 'msgpackr',
    available: installed('msgpackr'),
    async load() {
      const { Packr, addExtension } = await import('msgpackr');
      let packr = null;
      return {
        prepare(model) {
          let type = 1;
          // As msgpackr's README shows for classes: write returns the
          // instance itself (msgpackr then writes its fields, no copy) and
          // read gives the decoded object the class's prototype. A copy
          // each way (fieldsOf / revive) understated msgpackr by 7-20%.
          for (const Class of Object.values(model.raw)) {
            addExtension({
              Class,
              type: type++,
              write: (v) => v,
              read: (data) => Object.setPrototypeOf(data, Class.prototype),
            });
          }
          packr = new Packr({ structuredClone: true });
        },
        encode: (v) => packr.pack(v),
        decode: (b) => packr.unpack(b),
      };
    },
  },
  {
    id: 'msgpackr-plain',
    label: 'msgpackr (plain Packr)',
    pkg: 'msgpackr',
    available: installed('msgpackr'),
    async load() {
      const { Packr } = await import('msgpackr');
      const packr = new Packr();
      return {
        encode: (v) => packr.pack(v),
        decode: (b) => packr.unpack(b),
      };
    },
  },
  {
    id: 'devalue',
    label: 'devalue (reducers/revivers)',
    pkg: 'devalue',
    available: installed('devalue'),
    async load() {
      const devalue = await import('devalue');
      const reducers = {};
      const revivers = {};
      return {
        prepare(model) {
          // A reviver must return the object devalue gave it: devalue has
          // already pointed references (cycles) at it. A copy broke the
          // deep graph's cycle, and devalue was marked wrong for it.
          for (const [name, Class] of Object.entries(model.raw)) {
            reducers[name] = (v) => v instanceof Class && fieldsOf(v);
            revivers[name] = (data) => Object.setPrototypeOf(data, Class.prototype);
          }
        },
        encode: (v) => devalue.stringify(v, reducers),
        decode: (s) => devalue.parse(s, revivers),
      };
    },
  },
  {
    id: 'class-transformer',
    label: 'class-transformer (+ JSON)',
    pkg: 'class-transformer',
    available: () => installed('class-transformer')() && installed('reflect-metadata')(),
    async load() {
      require('reflect-metadata');
      const ct = require('class-transformer');
      let options = {};
      let Root = null;
      return {
        /*
         * What TypeScript's emitDecoratorMetadata and @Type(() => X) would
         * write, applied by hand: design:type first (class-transformer reads
         * it when @Type runs), then the element type.
         */
        prepare(model, workload) {
          const kinds = { date: Date, class: null, array: Array, map: Map, set: Set };
          for (const [className, fields] of Object.entries(model.schema)) {
            const proto = model.raw[className].prototype;
            for (const [field, [kind, of]] of Object.entries(fields)) {
              const element = kind === 'date' ? Date : of === 'Number' ? Number : model.raw[of];
              const designType = kind === 'class' ? element : kinds[kind];
              Reflect.defineMetadata('design:type', designType, proto, field);
              ct.Type(() => element)(proto, field);
            }
          }
          // Without the check it recurses forever on a cycle; it costs time,
          // so it is on only where the workload has a cycle.
          if (workload.cyclic) options = { enableCircularCheck: true };
          Root = model.root; // register() is the identity here: the raw class
        },
        encode: (v) => JSON.stringify(ct.instanceToPlain(v, options)),
        decode: (s) => ct.plainToInstance(Root, JSON.parse(s), options),
      };
    },
  },
  {
    id: 'esserializer',
    label: 'esserializer',
    pkg: 'esserializer',
    available: installed('esserializer'),
    async load() {
      const ES = require('esserializer');
      let classes = [];
      return {
        prepare(model) { classes = Object.values(model.raw); },
        encode: (v) => ES.serialize(v),
        decode: (s) => ES.deserialize(s, classes),
      };
    },
  },
];

export function peerById(id) {
  const p = PEERS.find((x) => x.id === id);
  if (!p) throw new Error(`unknown peer ${id} (known: ${PEERS.map((x) => x.id).join(', ')})`);
  return { ...p, version: versionOf(p.pkg) };
}
