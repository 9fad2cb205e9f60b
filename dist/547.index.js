export const id = 547;
export const ids = [547];
export const modules = {

/***/ 64547:
/***/ ((__unused_webpack___webpack_module__, __webpack_exports__, __webpack_require__) => {


// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  freshPlace: () => (/* binding */ freshPlace),
  readReports: () => (/* binding */ readReports),
  workspacePlace: () => (/* binding */ workspacePlace)
});

// EXTERNAL MODULE: external "node:fs/promises"
var promises_ = __webpack_require__(51455);
// EXTERNAL MODULE: external "node:os"
var external_node_os_ = __webpack_require__(48161);
// EXTERNAL MODULE: external "node:path"
var external_node_path_ = __webpack_require__(76760);
// EXTERNAL MODULE: ./node_modules/picomatch/index.js
var picomatch = __webpack_require__(14006);
// EXTERNAL MODULE: ./node_modules/tinyglobby/dist/index.mjs + 2 modules
var dist = __webpack_require__(60925);
// EXTERNAL MODULE: ./lib/paths.js
var paths = __webpack_require__(31307);
;// CONCATENATED MODULE: ./lib/scorers/ctrf.js
class CtrfError extends Error {
    name = "CtrfError";
}
const MESSAGE_CAP = 300;
const OUTCOMES = {
    passed: "passed",
    failed: "failed",
    skipped: "skipped",
    pending: "skipped",
    other: "errored",
};
function cap(text) {
    const line = text
        .split(/\r?\n/)
        .map((l) => l.trim())
        .find(Boolean) ?? "";
    const chars = [...line];
    return chars.length > MESSAGE_CAP ? `${chars.slice(0, MESSAGE_CAP - 1).join("")}…` : line;
}
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
function looksLikeCtrf(text) {
    return text
        .replace(/^\uFEFF/, "")
        .trimStart()
        .startsWith("{");
}
function parseCtrf(json) {
    const text = json.replace(/^\uFEFF/, "");
    if (!text.trim())
        throw new CtrfError("the report is empty");
    let doc;
    try {
        doc = JSON.parse(text);
    }
    catch (error) {
        throw new CtrfError(`the report is not JSON (${error.message})`);
    }
    const results = isObject(doc) ? doc.results : undefined;
    if (!isObject(results) || !Array.isArray(results.tests)) {
        throw new CtrfError('not a CTRF report: it has no "results.tests" list');
    }
    return results.tests.map((t, i) => {
        if (!isObject(t) || typeof t.name !== "string" || typeof t.status !== "string") {
            throw new CtrfError(`not a CTRF report: results.tests[${i}] has no "name" and "status"`);
        }
        const outcome = OUTCOMES[t.status];
        if (!outcome) {
            throw new CtrfError(`results.tests[${i}] ("${t.name}") has status "${t.status}"; CTRF's are passed, failed, skipped, pending, other`);
        }
        const suite = Array.isArray(t.suite) ? t.suite.filter((s) => typeof s === "string") : [];
        const message = outcome === "passed"
            ? null
            : typeof t.message === "string" && t.message.trim()
                ? cap(t.message)
                : typeof t.trace === "string" && t.trace.trim()
                    ? cap(t.trace)
                    : null;
        const ms = typeof t.duration === "number" && Number.isFinite(t.duration) ? t.duration : null;
        return {
            suite: suite.length > 0 ? suite.join(" > ") : null,
            classname: suite.length > 0 ? suite[suite.length - 1] : null,
            name: t.name,
            file: typeof t.filePath === "string" && t.filePath ? t.filePath : null,
            outcome,
            message,
            time: ms === null ? null : ms / 1000,
            flaky: outcome === "passed" && t.flaky === true,
        };
    });
}
//# sourceMappingURL=ctrf.js.map
// EXTERNAL MODULE: ./node_modules/fast-xml-parser/src/xmlparser/XMLParser.js + 23 modules
var XMLParser = __webpack_require__(41143);
// EXTERNAL MODULE: ./node_modules/fast-xml-parser/src/fxp.js
var fxp = __webpack_require__(75824);
;// CONCATENATED MODULE: ./lib/scorers/junit.js


class JUnitError extends Error {
    name = "JUnitError";
}
const junit_MESSAGE_CAP = 300;
const parser = new XMLParser/* default */.A({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: "",
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
    htmlEntities: true,
    maxNestedTags: 200,
});
function tagOf(node) {
    return Object.keys(node).find((k) => k !== ":@");
}
function childrenOf(node, tag) {
    const c = node[tag];
    return Array.isArray(c) ? c : [];
}
function textOf(nodes) {
    let out = "";
    for (const n of nodes) {
        const tag = tagOf(n);
        if (tag === "#text")
            out += String(n["#text"] ?? "");
        else if (tag === "#cdata")
            out += textOf(childrenOf(n, tag));
    }
    return out;
}
function attr(node, name) {
    const v = node[":@"]?.[name];
    return v === undefined ? null : String(v);
}
function junit_cap(text) {
    const chars = [...text];
    return chars.length > junit_MESSAGE_CAP ? `${chars.slice(0, junit_MESSAGE_CAP - 1).join("")}…` : text;
}
function messageOf(node, tag) {
    const m = attr(node, "message")?.trim();
    if (m)
        return junit_cap(m.split(/\r?\n/)[0].trim());
    const line = textOf(childrenOf(node, tag))
        .split(/\r?\n/)
        .map((l) => l.trim())
        .find(Boolean);
    return line ? junit_cap(line) : null;
}
const PRECEDENCE = [
    ["failure", "failed"],
    ["error", "errored"],
    ["skipped", "skipped"],
];
function readTestcase(node, suite) {
    const kids = childrenOf(node, "testcase");
    let outcome = "passed";
    let message = null;
    for (const [tag, result] of PRECEDENCE) {
        const hit = kids.find((k) => tagOf(k) === tag);
        if (hit) {
            outcome = result;
            message = messageOf(hit, tag);
            break;
        }
    }
    const flaky = outcome === "passed" && kids.some((k) => ["flakyFailure", "flakyError"].includes(tagOf(k) ?? ""));
    const t = Number(attr(node, "time") ?? Number.NaN);
    return {
        suite,
        classname: attr(node, "classname") || null,
        name: attr(node, "name"),
        file: attr(node, "file") || null,
        outcome,
        message,
        time: Number.isFinite(t) ? t : null,
        flaky,
    };
}
function walk(nodes, suite, out) {
    for (const node of nodes) {
        const tag = tagOf(node);
        if (tag === "testcase")
            out.push(readTestcase(node, suite));
        else if (tag === "testsuite" || tag === "testsuites") {
            walk(childrenOf(node, tag), tag === "testsuite" ? (attr(node, "name") ?? suite) : suite, out);
        }
    }
}
function parseJUnit(xml) {
    const text = xml.replace(/^\uFEFF/, "");
    if (!text.trim())
        throw new JUnitError("the report is empty");
    const valid = fxp/* XMLValidator */.iI.validate(text);
    if (valid !== true) {
        throw new JUnitError(`the report is not well-formed XML (line ${valid.err.line}: ${valid.err.msg})`);
    }
    let doc;
    try {
        doc = parser.parse(text);
    }
    catch (error) {
        throw new JUnitError(`the report cannot be read: ${error.message}`);
    }
    const root = doc.find((n) => {
        const t = tagOf(n);
        return t !== undefined && !t.startsWith("#") && !t.startsWith("?");
    });
    const rootTag = root ? tagOf(root) : undefined;
    if (!root || (rootTag !== "testsuites" && rootTag !== "testsuite")) {
        throw new JUnitError(`not a JUnit report: the root element is <${rootTag ?? "none"}>, not <testsuites> or <testsuite>`);
    }
    const out = [];
    walk([root], null, out);
    return out;
}
//# sourceMappingURL=junit.js.map
// EXTERNAL MODULE: ./lib/scorers/tap.js
var tap = __webpack_require__(34208);
// EXTERNAL MODULE: ./lib/scorers/workspace-path.js
var workspace_path = __webpack_require__(66474);
;// CONCATENATED MODULE: ./lib/scorers/tests-report.js










const REPORT_CAP_BYTES = 64 * 1024 * 1024;
async function reportFiles(ws, base, report) {
    const shown = (f) => external_node_path_.relative(ws, f).split(external_node_path_.sep).join("/");
    if (!picomatch.scan(report).isGlob) {
        const file = external_node_path_.resolve(base, report);
        await (0,workspace_path/* mustResolveInside */.Ab)(ws, external_node_path_.dirname(file), shown(external_node_path_.dirname(file)));
        return (0,paths/* isWithin */.U)(ws, file) ? [file] : [];
    }
    const found = await (0,dist/* glob */.TI)(report, {
        cwd: base,
        absolute: true,
        dot: true,
        onlyFiles: true,
        followSymbolicLinks: false,
    });
    for (const f of found)
        await (0,workspace_path/* mustResolveInside */.Ab)(ws, f, shown(f));
    return found.filter((f) => (0,paths/* isWithin */.U)(ws, f)).sort();
}
async function freshPlace(ctx, o) {
    const own = ctx.reportDir === undefined;
    const dir = ctx.reportDir ?? (await (0,promises_.mkdtemp)(external_node_path_.join(external_node_os_.tmpdir(), "evalgate-report-")));
    const file = external_node_path_.join(dir, o.report_format === "ctrf" ? "report.json" : "report.xml");
    return {
        extra: {
            placeholders: { REPORT_FILE: file, REPORT_DIR: dir },
            env: { EVALGATE_REPORT_FILE: file, EVALGATE_REPORT_DIR: dir },
        },
        shown: "{REPORT_FILE}",
        files: async () => {
            const names = await (0,promises_.readdir)(dir).catch(() => []);
            return names.sort().map((n) => external_node_path_.join(dir, n));
        },
        rel: (f) => (f === file ? "{REPORT_FILE}" : `{REPORT_DIR}/${external_node_path_.basename(f)}`),
        size: async (f) => {
            const s = await (0,promises_.lstat)(f);
            if (!s.isFile())
                throw new workspace_path/* RefusedPath */.i_(`report ${external_node_path_.basename(f)} is not a regular file`);
            return s.size;
        },
        done: async () => {
            if (own)
                await (0,promises_.rm)(dir, { recursive: true, force: true });
        },
    };
}
async function workspacePlace(ctx, o, report) {
    const base = o.cwd ? external_node_path_.resolve(ctx.workspace, o.cwd) : ctx.workspace;
    const rel = (f) => external_node_path_.relative(ctx.workspace, f).split(external_node_path_.sep).join("/");
    for (const f of await reportFiles(ctx.workspace, base, report)) {
        await (0,promises_.rm)(f, { force: true, recursive: false }).catch(() => undefined);
    }
    return {
        extra: {},
        shown: report,
        files: () => reportFiles(ctx.workspace, base, report),
        rel,
        size: async (file) => {
            try {
                await (0,workspace_path/* mustResolveInside */.Ab)(ctx.workspace, file, rel(file));
                const s = await (0,promises_.stat)(file);
                if (!s.isFile())
                    throw new workspace_path/* RefusedPath */.i_(`report ${rel(file)} is not a regular file`);
                return s.size;
            }
            catch (error) {
                if (error instanceof workspace_path/* RefusedPath */.i_)
                    throw error;
                return undefined;
            }
        },
        done: async () => { },
    };
}
async function readReports(place, format) {
    const cases = [];
    const read = [];
    for (const file of await place.files()) {
        const size = await place.size(file);
        if (size === undefined)
            continue;
        if (size > REPORT_CAP_BYTES) {
            return {
                state: "error",
                reason: `report ${place.rel(file)} is ${size} bytes, more than the 64 MiB cap`,
            };
        }
        try {
            const text = await (0,promises_.readFile)(file, "utf8");
            cases.push(...parseReport(text, format));
        }
        catch (error) {
            if (error instanceof JUnitError || error instanceof CtrfError || error instanceof tap/* TapError */.Ke) {
                return { state: "error", reason: `${place.rel(file)}: ${error.message}` };
            }
            throw error;
        }
        read.push(place.rel(file));
    }
    return { cases, read };
}
function parseReport(text, format) {
    const kind = format ?? (looksLikeCtrf(text) ? "ctrf" : (0,tap/* looksLikeTap */.z3)(text) ? "tap" : "junit");
    if (kind === "ctrf")
        return parseCtrf(text);
    if (kind === "tap")
        return (0,tap/* parseTap */.LT)(text);
    return parseJUnit(text);
}
//# sourceMappingURL=tests-report.js.map

/***/ })

};
