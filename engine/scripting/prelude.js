// The sandbox of a script process (engine/scripting/host.py), defined once when the process
// starts. It defines `__interlock_run(input, source)`, which evaluates `source` over the input's
// variables and facade and answers JSON text: [clean, {"value": ..., "changes": [...]}] or
// [clean, {"error": {"text": ..., "line": ...}}].
//
// Nothing a script does is seen by a later one:
// - the script is compiled by the Function constructor, whose scope is the global one, so none of
//   the bindings below (the facade's helpers, `clean`, the captured built-ins) is in its reach;
// - every built-in reachable from the global object (and those reachable only through syntax) is
//   frozen, and the global object's own bindings cannot be reassigned;
// - globals a script adds are deleted and the global object's prototype restored before and after
//   each script (`clean`; false if that cannot be done, and the process is then retired), and
//   the RegExp statics (`RegExp.input`, `lastMatch`,
//   `$1`...) are reset to an empty match;
// - timers, WeakRef and FinalizationRegistry (work that would run later, outside the script) are
//   removed; promise jobs a script leaves run before its process serves another script, within
//   the script's time limit (the host waits for them).
(function (global) {
  ['WebAssembly', 'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Atomics', 'Int8Array',
   'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
   'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'Float16Array',
   'FinalizationRegistry', 'WeakRef',
   'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', '__timer_manager'
  ].forEach(function (name) {
    delete global[name];
    if (name in global) { global[name] = undefined; }  // not configurable, but writable
  });
  var own = Object.prototype.hasOwnProperty;
  var apply = Reflect.apply;
  var stringify = JSON.stringify, parse = JSON.parse;
  var exec = RegExp.prototype.exec, isArray = Array.isArray;
  var emptyPattern = /(?:)/;
  var LOCATED = /__interlock_script:(\d+):\d+/;
  var BAD_TEXT = /[\u0000\uD800-\uDFFF]/;
  var SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
  var SCRIPT_URL = '\n//# sourceURL=__interlock_script';
  var MAX_NAME = 255, MAX_DEPTH = 64;
  // Names the proxy that shows variables as globals never shows (they stay the runner's own),
  // and lexical bindings outside the global object that a script must not reach (mini-racer's).
  var hidden = { execution: true, task: true, eval: true, arguments: true, S: true, JSON: true,
                 XML: true };
  var shadowed = { __TimerManager: true };
  var runner = Function('execution', 'task', 'S', 'JSON', 'XML', '__interlock_scope',
                        '__interlock_source',
                        'with (__interlock_scope) { return eval(__interlock_source); }');

  // Camunda Spin's JSON access: S(value) and JSON(value) over a JSON value (an object or array
  // a Json variable holds), a JSON text or a node; read-only nodes. `JSON` keeps `parse` and
  // `stringify`. Spin XML is refused. Defined once and frozen with everything else below.
  var SPIN_XML = 'Spin XML is not supported by this engine; only JSON values can be read with ' +
                 'S() or JSON()';
  var numberType = function (v) { return typeof v === 'number'; };
  function kind(v) {
    if (v === null) { return 'NULL'; }
    if (isArray(v)) { return 'ARRAY'; }
    var t = typeof v;
    return t === 'string' ? 'STRING' : t === 'number' ? 'NUMBER' : t === 'boolean' ? 'BOOLEAN'
                                                                   : 'OBJECT';
  }
  function isObjectValue(v) { return v !== null && typeof v === 'object' && !isArray(v); }
  function SpinJsonNode(value) {
    Object.defineProperty(this, '__value', { value: value });
    Object.freeze(this);
  }
  function expected(node, wanted) {
    return new TypeError('expected a ' + wanted + ' node, got ' + kind(node.__value));
  }
  function typedValue(test, wanted) {
    return function () {
      if (!test(this.__value)) { throw expected(this, wanted); }
      return this.__value;
    };
  }
  function nodeList(items) {
    var list = items.map(function (item) { return new SpinJsonNode(item); });
    Object.defineProperty(list, 'size', { value: function () { return list.length; } });
    Object.defineProperty(list, 'get', { value: function (i) {
      if (typeof i !== 'number' || i < 0 || i >= list.length || i % 1 !== 0) {
        throw new RangeError('index ' + i + ' is out of range for a list of ' + list.length);
      }
      return list[i];
    } });
    return list;
  }
  function same(a, b) { return stringify(a) === stringify(b); }
  var isValue = function (v) { return v === null || typeof v !== 'object'; };
  var nodeMethods = {
    prop: function (name) {
      if (arguments.length > 1) {
        throw new TypeError('prop(name, value) changes a JSON node; nodes are read-only here');
      }
      name = String(name);
      if (!isObjectValue(this.__value)) {
        throw new TypeError("cannot read property '" + name + "' of a " + kind(this.__value) +
                            ' node');
      }
      if (!apply(own, this.__value, [name])) {
        throw new TypeError("unable to find property '" + name + "'");
      }
      return new SpinJsonNode(this.__value[name]);
    },
    hasProp: function (name) {
      return isObjectValue(this.__value) && apply(own, this.__value, [String(name)]);
    },
    elements: function () {
      if (!isArray(this.__value)) { throw expected(this, 'ARRAY'); }
      return nodeList(this.__value);
    },
    fieldNames: function () {
      if (isArray(this.__value)) { return []; }
      if (!isObjectValue(this.__value)) { throw expected(this, 'ARRAY or OBJECT'); }
      return Object.keys(this.__value);
    },
    contains: function (wanted) {
      if (!isArray(this.__value)) { throw expected(this, 'ARRAY'); }
      var target = wanted instanceof SpinJsonNode ? wanted.__value : wanted;
      return this.__value.some(function (item) { return same(item, target); });
    },
    indexOf: function (wanted) {
      if (!isArray(this.__value)) { throw expected(this, 'ARRAY'); }
      var target = wanted instanceof SpinJsonNode ? wanted.__value : wanted;
      for (var i = 0; i < this.__value.length; i++) {
        if (same(this.__value[i], target)) { return i; }
      }
      throw new TypeError('unable to find ' + stringify(target) + ' in the array');
    },
    stringValue: typedValue(function (v) { return typeof v === 'string'; }, 'STRING'),
    numberValue: typedValue(numberType, 'NUMBER'),
    boolValue: typedValue(function (v) { return typeof v === 'boolean'; }, 'BOOLEAN'),
    value: typedValue(isValue, 'STRING, NUMBER, BOOLEAN or NULL'),
    isNull: function () { return this.__value === null; },
    isString: function () { return typeof this.__value === 'string'; },
    isNumber: function () { return numberType(this.__value); },
    isBoolean: function () { return typeof this.__value === 'boolean'; },
    isArray: function () { return isArray(this.__value); },
    isObject: function () { return isObjectValue(this.__value); },
    isValue: function () { return isValue(this.__value); },
    toString: function () { return stringify(this.__value); },
    toJSON: function () { return this.__value; }
  };
  ['deleteProp', 'append', 'insertAt', 'insertBefore', 'insertAfter', 'remove', 'removeLast',
   'removeAt', 'propList'].forEach(function (name) {
    nodeMethods[name] = function () {
      throw new TypeError(name + '() changes a JSON node; Spin nodes are read-only here');
    };
  });
  ['xPath', 'childElement', 'childElements', 'attr', 'attrs', 'attrNames', 'hasAttr',
   'textContent'].forEach(function (name) {
    nodeMethods[name] = function () { throw new TypeError(name + '(): ' + SPIN_XML); };
  });
  Object.keys(nodeMethods).forEach(function (name) {
    Object.defineProperty(SpinJsonNode.prototype, name, { value: nodeMethods[name] });
  });
  function readSpin(value, name, format) {
    if (format !== undefined && format !== null) {
      var written = String(format).trim().toLowerCase();
      if (written === 'application/xml') { throw new TypeError(name + '(): ' + SPIN_XML); }
      if (written !== 'application/json') {
        throw new TypeError(name + "(): unknown data format '" + format +
                            "'; only 'application/json' is");
      }
    }
    if (value instanceof SpinJsonNode) { return value; }
    if (value === null || value === undefined) {
      throw new TypeError(name + '() needs a value, got ' + value);
    }
    if (typeof value === 'string') {
      if (name === 'S' && value.trim().charAt(0) === '<') {
        throw new TypeError(name + '(): ' + SPIN_XML);
      }
      try {
        return new SpinJsonNode(parse(value));
      } catch (error) {
        throw new TypeError(name + '() cannot read the text as JSON: ' + error.message);
      }
    }
    if (typeof value === 'function' || typeof value === 'symbol') {
      throw new TypeError(name + '() cannot read a ' + typeof value + ' as JSON');
    }
    return new SpinJsonNode(parse(stringify(value)));
  }
  var spinS = function S(value, format) { return readSpin(value, 'S', format); };
  var spinJSON = function JSON(value) { return readSpin(value, 'JSON'); };
  Object.defineProperty(spinJSON, 'parse', { value: parse });
  Object.defineProperty(spinJSON, 'stringify', { value: stringify });
  var spinXML = function XML() { throw new TypeError('XML(): ' + SPIN_XML); };

  function match(pattern, text) {
    pattern.lastIndex = 0;
    return apply(exec, pattern, [text]);
  }
  function badText(text) {
    // A NUL character, or a surrogate that is not half of a pair: no text column holds either.
    return match(BAD_TEXT, text) !== null &&
      (text.indexOf('\u0000') >= 0 || match(BAD_TEXT, text.replace(SURROGATE_PAIR, '')) !== null);
  }
  // Why no variable can hold `value` (a JSON copy), or null: checked as request input is.
  function problem(value, depth) {
    if (typeof value === 'string') {
      return badText(value) ? 'contains a NUL character or a lone surrogate' : null;
    }
    if (value === null || typeof value !== 'object') { return null; }
    if (depth >= MAX_DEPTH) { return 'is nested deeper than ' + MAX_DEPTH + ' levels'; }
    var found = null;
    if (isArray(value)) {
      for (var i = 0; i < value.length && found === null; i++) {
        found = problem(value[i], depth + 1);
      }
      return found;
    }
    for (var key in value) {
      if (found === null && apply(own, value, [key])) {
        found = badText(key) ? 'has a key with a NUL character or a lone surrogate'
                             : problem(value[key], depth + 1);
      }
    }
    return found;
  }
  function copy(v, what) {
    var text = stringify(v);
    if (text === undefined) { return null; }
    var value = parse(text);
    var found = problem(value, 0);
    if (found !== null) {
      throw new (found.indexOf('nested') >= 0 ? RangeError : TypeError)(what + ' ' + found);
    }
    return value;
  }
  function checkedName(n) {
    n = String(n);
    if (n.length === 0) { throw new TypeError('a variable name must not be empty'); }
    if (n.length > MAX_NAME) {
      throw new RangeError('a variable name has at most ' + MAX_NAME + ' characters, not ' +
                           n.length);
    }
    if (badText(n)) {
      throw new TypeError('a variable name must not contain a NUL character or a lone surrogate');
    }
    return n;
  }
  function describe(error) {
    var line = null;
    if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
      var found = match(LOCATED, String(error.stack));
      if (found !== null) { line = Number(found[1]); }
    }
    return { text: String(error).slice(0, 2000), line: line };
  }

  function run(input, source) {
    clean();
    var vars = input.vars, subject = input.subject, changes = [], shadow = {};
    function get(n) { n = String(n); return apply(own, vars, [n]) ? vars[n] : null; }
    function has(n) { return apply(own, vars, [String(n)]); }
    function set(n, v, local) {
      n = checkedName(n);
      v = copy(v, "variable '" + n.slice(0, 60) + "'");
      vars[n] = v; changes.push(['set', n, v, local]);
    }
    function remove(n, local) {
      n = checkedName(n); delete vars[n]; changes.push(['remove', n, null, local]);
    }
    function all() { return parse(stringify(vars)); }
    function variableMethods(target) {
      target.getVariable = get; target.getVariableLocal = get;
      target.hasVariable = has; target.hasVariableLocal = has;
      target.getVariables = all; target.getVariablesLocal = all;
      target.setVariable = function (n, v) { set(n, v, false); };
      target.setVariableLocal = function (n, v) { set(n, v, true); };
      target.removeVariable = function (n) { remove(n, false); };
      target.removeVariableLocal = function (n) { remove(n, true); };
      return target;
    }
    function readOnly(target, names, value) {
      names.forEach(function (n) {
        Object.defineProperty(target, n, { get: function () { return value; }, enumerable: true });
      });
    }
    function getter(value) { return function () { return value; }; }
    var execution = variableMethods({});
    execution.getId = getter(subject.execution_id);
    execution.getActivityId = getter(subject.activity_id);
    execution.getCurrentActivityId = execution.getActivityId;
    execution.getCurrentActivityName = getter(subject.activity_name);
    execution.getProcessInstanceId = getter(subject.instance_id);
    execution.getProcessBusinessKey = getter(subject.business_key);
    execution.getBusinessKey = execution.getProcessBusinessKey;
    execution.getProcessDefinitionId = getter(subject.definition_id);
    execution.getEventName = getter(subject.event_name);
    readOnly(execution, ['id'], subject.execution_id);
    readOnly(execution, ['activityId', 'currentActivityId'], subject.activity_id);
    readOnly(execution, ['activityName', 'currentActivityName'], subject.activity_name);
    readOnly(execution, ['processInstanceId'], subject.instance_id);
    readOnly(execution, ['processBusinessKey', 'businessKey'], subject.business_key);
    readOnly(execution, ['processDefinitionId'], subject.definition_id);
    readOnly(execution, ['eventName'], subject.event_name);
    var task = null;
    if (input.task) {
      var facts = input.task;
      task = variableMethods({});
      var setAssignee = function (user) {
        user = user === undefined || user === null ? null : String(user);
        if (user !== null && (user.length > MAX_NAME || badText(user))) {
          throw new RangeError('an assignee has at most ' + MAX_NAME +
                               ' characters and no NUL character or lone surrogate');
        }
        facts.assignee = user; changes.push(['assignee', null, user, false]);
      };
      var setPriority = function (value) {
        var number = Number(value);
        if (!Number.isSafeInteger(number)) { throw new TypeError('a priority is an integer'); }
        facts.priority = number; changes.push(['priority', null, number, false]);
      };
      task.getId = getter(facts.id);
      task.getName = getter(facts.name);
      task.getTaskDefinitionKey = getter(facts.task_definition_key);
      task.getEventName = getter(subject.event_name);
      task.getProcessInstanceId = getter(subject.instance_id);
      task.getExecutionId = getter(subject.execution_id);
      task.getExecution = function () { return execution; };
      task.getAssignee = function () { return facts.assignee; };
      task.setAssignee = setAssignee;
      task.getPriority = function () { return facts.priority; };
      task.setPriority = setPriority;
      readOnly(task, ['id'], facts.id);
      readOnly(task, ['name'], facts.name);
      readOnly(task, ['taskDefinitionKey'], facts.task_definition_key);
      readOnly(task, ['eventName'], subject.event_name);
      readOnly(task, ['processInstanceId'], subject.instance_id);
      readOnly(task, ['executionId'], subject.execution_id);
      Object.defineProperty(task, 'assignee', {
        get: function () { return facts.assignee; }, set: setAssignee, enumerable: true });
      Object.defineProperty(task, 'priority', {
        get: function () { return facts.priority; }, set: setPriority, enumerable: true });
    }
    var scope = new Proxy(vars, {
      has: function (target, key) {
        if (typeof key !== 'string') { return false; }
        if (apply(own, shadowed, [key])) { return true; }
        return !apply(own, hidden, [key]) && key.indexOf('__interlock') !== 0 &&
          (apply(own, shadow, [key]) || apply(own, vars, [key]));
      },
      get: function (target, key) {
        if (typeof key !== 'string') { return undefined; }
        if (apply(own, shadow, [key])) { return shadow[key]; }
        return apply(own, shadowed, [key]) ? undefined : vars[key];
      },
      set: function (target, key, value) { shadow[key] = value; return true; }
    });
    var text;
    try {
      var value = runner(execution, task, spinS, spinJSON, spinXML, scope, source + SCRIPT_URL);
      var kind = typeof value;
      if (kind === 'undefined' || kind === 'function' || kind === 'symbol') { value = null; }
      text = stringify({ value: copy(value, "the script's value"), changes: changes });
    } catch (error) {
      try {
        text = stringify({ error: describe(error) });
      } catch (ignored) {
        text = stringify({ error: { text: 'the script threw what cannot be shown', line: null } });
      }
    }
    match(emptyPattern, '');  // the RegExp statics forget the script's strings
    return stringify([clean(), text]);
  }
  Object.defineProperty(global, '__interlock_run', { value: run, writable: false,
                                                      configurable: false });
  var seen = new Set();
  function harden(value) {
    if (value === null || value === global || seen.has(value) ||
        (typeof value !== 'object' && typeof value !== 'function')) { return; }
    seen.add(value);
    Object.freeze(value);
    Reflect.ownKeys(value).forEach(function (key) {
      var property = Object.getOwnPropertyDescriptor(value, key);
      if (property === undefined) { return; }
      if ('value' in property) { harden(property.value); }
      harden(property.get); harden(property.set);
    });
    harden(Object.getPrototypeOf(value));
  }
  [function* () {}, async function () {}, async function* () {}, [][Symbol.iterator](),
   new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), ''[Symbol.iterator](),
   /x/[Symbol.matchAll]('x'), (function* () {})(), Promise.resolve()
  ].forEach(function (value) { harden(Object.getPrototypeOf(value)); });
  [spinS, spinJSON, spinXML, SpinJsonNode].forEach(harden);
  var baseline = Object.create(null);
  Reflect.ownKeys(global).forEach(function (key) {
    baseline[typeof key === 'symbol' ? key.toString() : key] = true;
    var property = Object.getOwnPropertyDescriptor(global, key);
    if (property === undefined) { return; }
    if ('value' in property) {
      harden(property.value);
      if (property.configurable || property.writable) {
        Object.defineProperty(global, key, { writable: false, configurable: false });
      }
    } else if (property.configurable) {
      Object.defineProperty(global, key, { configurable: false });
    }
  });
  var count = Reflect.ownKeys(global).length;
  var globalPrototype = Object.getPrototypeOf(global);
  var getPrototype = Object.getPrototypeOf, setPrototype = Reflect.setPrototypeOf;
  var isExtensible = Object.isExtensible;
  function clean() {
    if (!isExtensible(global) ||
        (getPrototype(global) !== globalPrototype && !setPrototype(global, globalPrototype))) {
      return false;
    }
    var keys = Reflect.ownKeys(global);
    if (keys.length === count) { return true; }
    return keys.every(function (key) {
      return baseline[typeof key === 'symbol' ? key.toString() : key] || delete global[key];
    });
  }
})(globalThis);
