"use strict";
// Mnemo's memory viewer: the page the daemon serves. It reads the memory
// through /api (adapters/viewer/api.go), follows its changes live through
// /api/stream (server-sent events), and builds every element with DOM
// calls and textContent: no markup is ever made from the memory's text.
// el makes an element with a class, text and children.
function el(tag, cls, text, ...kids) {
    const e = document.createElement(tag);
    if (cls)
        e.className = cls;
    if (text !== undefined)
        e.textContent = text;
    for (const k of kids)
        if (k)
            e.append(k);
    return e;
}
// nodes drops the parts a record does not have.
function nodes(...parts) {
    return parts.filter((p) => p !== null);
}
function $(id) {
    const e = document.getElementById(id);
    if (!e)
        throw new Error(`no #${id}`);
    return e;
}
function when(t) {
    if (!t)
        return "";
    const d = new Date(t);
    return isNaN(d.getTime()) ? "" : d.toLocaleString(undefined, { dateStyle: "short", timeStyle: "short" });
}
class APIError extends Error {
    status;
    constructor(status, message) {
        super(message);
        this.status = status;
    }
}
// api calls the viewer's API; a change carries the header only the page
// can send.
async function api(path, method = "GET", body) {
    const headers = method === "GET" ? {} : { "X-Mnemo": "1" };
    if (body !== undefined)
        headers["Content-Type"] = "application/json";
    const init = { method, credentials: "same-origin", headers, body: body === undefined ? undefined : JSON.stringify(body) };
    const res = await fetch(path, init);
    if (!res.ok) {
        let msg = `${res.status}`;
        try {
            const body = await res.json();
            msg = body.error ?? msg;
        }
        catch {
            msg = (await res.text().catch(() => "")) || msg;
        }
        throw new APIError(res.status, msg);
    }
    return await res.json();
}
class Viewer {
    tab = "records";
    rows = [];
    selected = -1;
    openID = 0; // the observation open in the detail pane
    openCSID = ""; // the session open in the detail pane
    moreUntil = "";
    sessionOffset = 0;
    list = $("list");
    detail = $("detail");
    q = $("q");
    project = $("project");
    host = $("host");
    type = $("type");
    start() {
        $("search").addEventListener("submit", (e) => { e.preventDefault(); this.show("records"); });
        let timer = 0;
        this.q.addEventListener("input", () => { clearTimeout(timer); timer = window.setTimeout(() => this.show("records"), 250); });
        for (const s of [this.project, this.host, this.type])
            s.addEventListener("change", () => this.show(this.tab === "status" ? "records" : this.tab));
        for (const b of document.querySelectorAll("nav [data-tab]")) {
            b.addEventListener("click", () => this.show(b.dataset.tab));
        }
        document.addEventListener("keydown", (e) => this.key(e));
        // The address holds the view (restore), so that it can be reloaded,
        // bookmarked and shared; a pasted one is followed.
        window.addEventListener("hashchange", () => { if (location.hash !== this.address())
            this.restore(); });
        this.loadFilters().catch((e) => this.fail(e)).finally(() => this.restore());
        this.live();
    }
    // address is the view as the address's fragment: the tab, the search,
    // the filters and the record or session open (#q=rounding&id=12).
    address() {
        const p = this.filters();
        if (this.tab !== "records")
            p.set("tab", this.tab);
        if (this.openID)
            p.set("id", String(this.openID));
        else if (this.openCSID)
            p.set("session", this.openCSID);
        const h = p.toString();
        return h ? "#" + h : "";
    }
    // remember puts the view in the address, in place (not as history).
    remember() {
        const h = this.address();
        if (h !== location.hash)
            history.replaceState(null, "", h || location.pathname + location.search);
    }
    // restore shows the view the address holds.
    restore() {
        const p = new URLSearchParams(location.hash.slice(1));
        this.q.value = p.get("q") ?? "";
        for (const [sel, key] of [[this.project, "project"], [this.host, "host"], [this.type, "type"]]) {
            const v = p.get(key) ?? "";
            if (v && !sel.querySelector(`option[value="${CSS.escape(v)}"]`))
                sel.append(new Option(v, v));
            sel.value = v;
        }
        const tabs = ["records", "sessions", "context", "status", "review"];
        const tab = tabs.find((t) => t === p.get("tab")) ?? "records";
        this.show(tab);
        const id = Number(p.get("id"));
        if (Number.isInteger(id) && id > 0)
            this.openRecord(id).catch((e) => this.fail(e));
        else if (p.get("session"))
            this.openSession(p.get("session") ?? "").catch((e) => this.fail(e));
    }
    // key is the keyboard: / search, j k move, Enter open, x forget, 1-4 tabs,
    // r the records that need review, y keeps the open one.
    key(e) {
        const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement;
        if (e.key === "Escape") {
            // Leave the box as it is (a search box would clear itself) for
            // the list.
            e.preventDefault();
            if (typing)
                e.target.blur();
            this.list.focus();
            return;
        }
        if (typing || e.ctrlKey || e.metaKey || e.altKey)
            return;
        switch (e.key) {
            case "/":
                e.preventDefault();
                this.q.focus();
                this.q.select();
                break;
            case "j":
            case "ArrowDown":
                e.preventDefault();
                this.select(this.selected + 1);
                break;
            case "k":
            case "ArrowUp":
                e.preventDefault();
                this.select(this.selected - 1);
                break;
            case "Enter":
                this.rows[this.selected]?.open();
                break;
            case "x":
            case "Delete":
                if (this.openID)
                    void this.forget(this.openID);
                break;
            case "e":
                if (this.openID)
                    void api(`/api/records/${this.openID}`).then((o) => this.correctForm(o));
                break;
            case "p":
                if (this.openID)
                    void api(`/api/records/${this.openID}`).then((o) => this.pin(o.id, !o.pinned));
                break;
            case "w":
                if (this.openID)
                    void api(`/api/records/${this.openID}`).then((o) => this.markWrong(o.id, !o.wrong));
                break;
            case "y":
                if (this.openID)
                    void this.keep(this.openID);
                break;
            case "r":
                this.show("review");
                break;
            case "?":
                $("help").showModal();
                break;
            case "1":
                this.show("records");
                break;
            case "2":
                this.show("sessions");
                break;
            case "3":
                this.show("context");
                break;
            case "4":
                this.show("status");
                break;
        }
    }
    select(i) {
        if (this.rows.length === 0)
            return;
        i = Math.max(0, Math.min(this.rows.length - 1, i));
        this.rows[this.selected]?.node.classList.remove("selected");
        this.selected = i;
        const r = this.rows[i];
        r.node.classList.add("selected");
        r.node.scrollIntoView({ block: "nearest" });
    }
    fail(e) {
        const msg = e instanceof Error ? e.message : String(e);
        this.detail.replaceChildren(el("p", "error", msg));
    }
    async loadFilters() {
        const r = await api("/api/sessions?limit=1");
        fill(this.project, r.projects, "every project");
        fill(this.host, r.hosts, "every agent");
    }
    // show switches to a tab and loads its first page.
    show(tab) {
        this.tab = tab;
        for (const b of document.querySelectorAll("nav [data-tab]")) {
            b.setAttribute("aria-selected", String(b.dataset.tab === tab));
        }
        this.rows = [];
        this.selected = -1;
        this.list.replaceChildren();
        if (tab === "context" || tab === "status") {
            this.openID = 0; // these fill the detail pane themselves
            this.openCSID = "";
        }
        this.remember();
        const load = { records: () => this.records(false), sessions: () => this.sessions(false), context: () => this.context(), status: () => this.status(), review: () => this.review() }[tab];
        load().catch((e) => this.fail(e));
    }
    filters() {
        const p = new URLSearchParams();
        if (this.q.value.trim())
            p.set("q", this.q.value.trim());
        if (this.project.value)
            p.set("project", this.project.value);
        if (this.host.value)
            p.set("host", this.host.value);
        if (this.type.value)
            p.set("type", this.type.value);
        return p;
    }
    // records lists a search's hits, or with no query the newest records,
    // a page at a time.
    async records(more) {
        const p = this.filters();
        p.set("limit", "50");
        if (more && this.moreUntil)
            p.set("until", this.moreUntil);
        const res = await api(`/api/records?${p}`);
        this.list.querySelector(".more")?.remove();
        if (!more && res.hits.length === 0) {
            this.list.append(el("p", "empty", p.has("q") ? "Nothing matches." : "Nothing remembered yet."));
            return;
        }
        for (const h of res.hits) {
            if (this.rows.some((r) => r.id === h.id))
                continue;
            this.addRow(this.hitRow(h), false);
        }
        const last = res.hits[res.hits.length - 1];
        if (!p.has("q") && last && res.hits.length === 50) {
            // The next page: older than the oldest shown.
            this.moreUntil = new Date(new Date(last.time).getTime() - 1).toISOString();
            const b = el("button", "more", "Older records");
            b.addEventListener("click", () => this.records(true).catch((e) => this.fail(e)));
            this.list.append(b);
        }
        if (!more && this.selected < 0)
            this.select(0);
    }
    hitRow(h) {
        const node = el("div", "row", undefined, el("span", `type t-${h.type}`, h.type), el("span", "title", h.title, stateBadge(h.state)), el("span", "meta", [h.project, h.host, h.author ? `by ${h.author}` : "", when(h.time), seen(h.count, h.lastSeen), `#${h.id}`].filter(Boolean).join(" · ")), h.snippet ? el("span", "snippet", h.snippet) : null);
        node.dataset.id = String(h.id);
        const row = { key: `o${h.id}`, node, id: h.id, time: h.time, open: () => void this.openRecord(h.id) };
        node.addEventListener("click", () => { this.select(this.rows.indexOf(row)); row.open(); });
        return row;
    }
    addRow(r, first) {
        if (first) {
            this.list.querySelector(".empty")?.remove();
            this.rows.unshift(r);
            this.list.prepend(r.node);
            if (this.selected >= 0)
                this.selected++;
        }
        else {
            this.rows.push(r);
            const more = this.list.querySelector(".more");
            if (more)
                more.before(r.node);
            else
                this.list.append(r.node);
        }
    }
    removeRecord(id) {
        const i = this.rows.findIndex((r) => r.id === id);
        if (i >= 0) {
            this.rows[i].node.remove();
            this.rows.splice(i, 1);
            if (this.selected >= i)
                this.selected = Math.max(-1, this.selected - 1);
        }
        if (this.openID === id) {
            this.openID = 0;
            this.remember();
            this.detail.replaceChildren(el("p", "hint", `#${id} was forgotten.`));
        }
    }
    async openRecord(id) {
        const o = await api(`/api/records/${id}`);
        this.openID = id;
        this.openCSID = "";
        this.remember();
        this.detail.scrollTop = 0;
        const forget = el("button", "danger", "Forget");
        forget.addEventListener("click", () => void this.forget(id));
        const around = el("button", undefined, "Around it");
        around.addEventListener("click", () => void this.timeline(id));
        const session = el("button", undefined, "Its session");
        session.addEventListener("click", () => void this.openSession(o.contentSessionId));
        const pin = el("button", undefined, o.pinned ? "Unpin" : "Pin");
        pin.title = o.pinned ? "stop giving it to every session of its project" : "give it to every session of its project";
        pin.addEventListener("click", () => void this.pin(o.id, !o.pinned));
        const wrong = el("button", undefined, o.wrong ? "Not wrong" : "Mark wrong");
        wrong.title = o.wrong ? "take the mark back" : "keep it, but never give it to an agent as a fact";
        wrong.addEventListener("click", () => void this.markWrong(o.id, !o.wrong));
        const correct = el("button", undefined, "Correct");
        correct.addEventListener("click", () => this.correctForm(o));
        let keep = null;
        if (o.state === "needs-review") {
            keep = el("button", undefined, "Keep");
            keep.title = "it still holds: no review until its file changes again (y)";
            keep.addEventListener("click", () => void this.keep(o.id));
        }
        const edits = el("ul", "edits");
        for (const e of o.edits ?? [])
            edits.append(el("li", undefined, `until ${when(e.time)}: ${e.title}${e.narrative ? " — " + e.narrative : ""}`));
        this.detail.replaceChildren(...nodes(el("h2", undefined, o.title), el("p", "meta", [`#${o.id}`, o.type, o.project, o.host, o.origin ? `by ${o.origin.author} (team)` : "", o.tool, when(o.time), seen(o.count, o.lastSeen), o.source, o.pinned ? "pinned" : ""].filter(Boolean).join(" · ")), o.state === "changed" ? el("p", "state-note s-changed", "Its file changed since it was made; what it wrote is still there.") : null, o.state === "needs-review" ? el("p", "state-note s-needs-review", "Needs review: its file changed since, and nothing confirmed it for a while. Keep it (y), correct it (e) or forget it (x).") : null, o.state === "gone" ? el("p", "state-note s-gone", "What it saw is no longer in the code: the next sessions are not given it.") : null, o.state === "wrong" ? el("p", "state-note s-wrong", "Marked wrong: kept, but never given to an agent as a fact.") : null, o.state === "reverted" ? el("p", "state-note s-reverted", `Undone in its session (#${o.reverted ?? ""}): a dead end, never given as a fact.`) : null, o.state === "superseded" ? el("p", "state-note s-superseded", `Superseded by #${o.supersededBy ?? ""}: a later record says what is true now; the next sessions are given that one.`) : null, o.supersedes?.length ? el("p", "state-note", `Supersedes ${o.supersedes.map((id) => `#${id}`).join(", ")}.`) : null, o.subtitle ? el("p", "subtitle", o.subtitle) : null, o.request ? section("Asked", el("blockquote", undefined, o.request)) : null, o.narrative ? section("What happened", el("p", undefined, o.narrative)) : null, list("Facts", o.facts), list("Files changed", o.filesModified, "file"), list("Files read", o.filesRead, "file"), o.anchor ? section("Place", el("code", undefined, `${o.anchor.file}:${o.anchor.startLine}-${o.anchor.endLine}`)) : null, o.evidence ? section("Evidence", el("pre", "evidence", o.evidence)) : null, list("Concepts", o.concepts), edits.childElementCount ? section("Before it was corrected", edits) : null, el("p", "actions", undefined, ...nodes(keep, correct, pin, wrong, forget, around, session))));
    }
    // correctForm lets a person correct a record's title and text; the
    // memory keeps what it said before.
    correctForm(o) {
        const title = el("input", "edit-title");
        title.value = o.title;
        title.setAttribute("aria-label", "Title");
        const text = el("textarea", "edit-text");
        text.value = o.narrative;
        text.rows = 6;
        text.setAttribute("aria-label", "Text");
        const save = el("button", undefined, "Save the correction");
        const cancel = el("button", undefined, "Cancel");
        const form = el("form", "correct", undefined, el("h3", undefined, "Correct it"), title, text, el("p", "actions", undefined, save, cancel));
        form.addEventListener("submit", (e) => {
            e.preventDefault();
            const body = {};
            if (title.value.trim() !== o.title)
                body.title = title.value.trim();
            if (text.value.trim() !== o.narrative.trim())
                body.text = text.value.trim();
            api(`/api/records/${o.id}/correct`, "POST", body).then(() => {
                if (this.tab === "review")
                    this.show("review"); // a correction clears its review
                return this.openRecord(o.id);
            }).catch((err) => this.fail(err));
        });
        cancel.addEventListener("click", (e) => { e.preventDefault(); void this.openRecord(o.id); });
        this.detail.querySelector("p.actions")?.before(form);
        title.focus();
    }
    // review lists the records that need review: their file changed since
    // and nothing confirmed them for a while. Open one, then y keeps it, e
    // corrects it, x forgets it.
    async review() {
        const p = new URLSearchParams({ limit: "200" });
        if (this.project.value)
            p.set("project", this.project.value);
        const r = await api(`/api/review?${p}`);
        const after = r.afterDays > 0 ? `for ${count(r.afterDays, "day", "days")}` : "at once";
        this.list.append(el("p", "meta review-head", r.total === 0 ?
            `Nothing needs review: a record whose file changed needs it when nothing confirmed it ${after}.` :
            `${count(r.total, "record needs", "records need")} review: ${r.total === 1 ? "its file" : "their files"} changed, and nothing confirmed ${r.total === 1 ? "it" : "them"} ${after}. Open one: y keeps it, e corrects it, x forgets it.`));
        if (!this.openID)
            this.detail.replaceChildren(el("p", "hint", "A record whose file changed since, unconfirmed for a while, may no longer hold: open it, then keep it if it still does (y), correct it (e) or forget it (x)."));
        for (const it of r.items) {
            const o = it.observation;
            const node = el("div", "row", undefined, el("span", `type t-${o.type}`, o.type), el("span", "title", o.title, stateBadge(o.state)), el("span", "meta", [o.project, `${it.changed.join(", ")} changed`, `last confirmed ${when(it.confirmed)}`, `#${o.id}`].join(" · ")));
            node.dataset.id = String(o.id);
            const row = { key: `r${o.id}`, node, id: o.id, time: o.time, open: () => void this.openRecord(o.id) };
            node.addEventListener("click", () => { this.select(this.rows.indexOf(row)); row.open(); });
            this.addRow(row, false);
        }
        if (this.selected < 0)
            this.select(0);
    }
    // keep records a person's word that a record still holds: no review
    // until its file changes again.
    async keep(id) {
        try {
            await api(`/api/records/${id}/keep`, "PUT");
            if (this.tab === "review")
                this.show("review");
            await this.openRecord(id);
        }
        catch (e) {
            this.fail(e);
        }
    }
    async markWrong(id, on) {
        try {
            await api(`/api/records/${id}/wrong`, on ? "PUT" : "DELETE");
            await this.openRecord(id);
        }
        catch (e) {
            this.fail(e);
        }
    }
    async pin(id, on) {
        try {
            await api(`/api/records/${id}/pin`, on ? "PUT" : "DELETE");
            await this.openRecord(id);
        }
        catch (e) {
            this.fail(e);
        }
    }
    async forget(id) {
        if (!confirm(`Forget #${id}? It is deleted from the memory and its indexes, for good.`))
            return;
        try {
            await api(`/api/records/${id}`, "DELETE");
            this.removeRecord(id);
        }
        catch (e) {
            this.fail(e);
        }
    }
    async timeline(id) {
        const r = await api(`/api/records/${id}/timeline`);
        const ul = el("ul", "timeline");
        for (const o of r.observations) {
            const li = el("li", o.id === id ? "anchor" : undefined, undefined, el("span", "meta", `${when(o.time)} · ${o.type} · #${o.id}`), el("span", undefined, " " + o.title));
            li.addEventListener("click", () => void this.openRecord(o.id));
            ul.append(li);
        }
        this.detail.replaceChildren(el("h2", undefined, `Around #${id}`), ul);
    }
    async sessions(more) {
        const p = new URLSearchParams();
        if (this.project.value)
            p.set("project", this.project.value);
        if (this.host.value)
            p.set("host", this.host.value);
        this.sessionOffset = more ? this.sessionOffset + 50 : 0;
        p.set("offset", String(this.sessionOffset));
        p.set("limit", "50");
        const r = await api(`/api/sessions?${p}`);
        this.list.querySelector(".more")?.remove();
        if (r.total === 0)
            this.list.append(el("p", "empty", "No sessions yet."));
        for (const s of r.sessions) {
            const node = el("div", "row", undefined, el("span", `status s-${s.status}`, s.status), el("span", "title", `${s.project} · ${s.platform}`), el("span", "meta", `${count(s.promptCounter, "prompt", "prompts")} · ${when(s.updatedAt || s.createdAt)} · ${s.contentSessionId}`));
            const row = { key: `s${s.id}`, node, open: () => void this.openSession(s.contentSessionId) };
            node.addEventListener("click", () => { this.select(this.rows.indexOf(row)); row.open(); });
            this.addRow(row, false);
        }
        if (this.sessionOffset + r.sessions.length < r.total) {
            const b = el("button", "more", "More sessions");
            b.addEventListener("click", () => this.sessions(true).catch((e) => this.fail(e)));
            this.list.append(b);
        }
        if (!more && this.selected < 0)
            this.select(0);
    }
    async openSession(csid) {
        const r = await api(`/api/sessions/${encodeURIComponent(csid)}`);
        const s = r.session;
        this.openID = 0;
        this.openCSID = csid;
        this.remember();
        const parts = [
            el("h2", undefined, `${s.project} · ${s.platform}`),
            el("p", "meta", [s.contentSessionId, s.status, count(s.promptCounter, "prompt", "prompts"), when(s.createdAt)].join(" · ")),
        ];
        const turns = new Set([...r.prompts.map((p) => p.number), ...r.summaries.map((x) => x.promptNumber)]);
        for (const n of [...turns].sort((a, b) => a - b)) {
            const prompt = r.prompts.find((p) => p.number === n);
            const sec = el("section", "turn", undefined, el("h3", undefined, `Prompt ${n}`), prompt ? el("blockquote", undefined, prompt.text) : el("p", "meta", "(private, or not kept)"));
            const ul = el("ul", "records");
            for (const h of r.observations.filter((o) => o.promptNumber === n)) {
                ul.append(this.recordItem(h));
            }
            if (ul.childElementCount)
                sec.append(ul);
            for (const sum of r.summaries.filter((x) => x.promptNumber === n))
                sec.append(summaryNode(sum));
            parts.push(sec);
        }
        if (r.observationTotal > r.observations.length) {
            parts.push(el("p", "meta", `${r.observations.length} of ${r.observationTotal} observations shown.`));
        }
        this.detail.replaceChildren(...nodes(...parts));
    }
    recordItem(h) {
        const li = el("li", undefined, undefined, el("span", `type t-${h.type}`, h.type), el("span", undefined, " " + h.title), el("span", "meta", ` #${h.id}`));
        li.addEventListener("click", () => void this.openRecord(h.id));
        return li;
    }
    async context() {
        const project = this.project.value || this.project.options[1]?.value || "";
        if (!project) {
            this.list.append(el("p", "empty", "No project has memory yet."));
            return;
        }
        const q = new URLSearchParams({ project });
        const [ctx, inj, known] = await Promise.all([
            api(`/api/context?${q}`),
            api(`/api/injections?${q}&limit=20`),
            api(`/api/knowledge?${q}`),
        ]);
        const why = el("ul", "reasons");
        for (const it of ctx.items ?? []) {
            const li = el("li", undefined, undefined, el("a", undefined, `#${it.id}`), el("span", undefined, " " + it.reason));
            li.addEventListener("click", () => void this.openRecord(it.id));
            why.append(li);
        }
        const left = el("ul", "reasons");
        for (const it of ctx.left ?? []) {
            const li = el("li", undefined, undefined, el("a", undefined, `#${it.id}`), el("span", undefined, " " + it.reason));
            li.addEventListener("click", () => void this.openRecord(it.id));
            left.append(li);
        }
        this.list.append(el("h2", undefined, `Given to the next session of ${project}`), el("p", "meta", `${ctx.bytes} bytes, ${ctx.observationIds.length} records`), this.knowledgeList(known), section("Why each record", why), left.childElementCount ? section("Left out", left) : el("span"));
        const past = el("ul", "injections");
        for (const i of inj.injections) {
            past.append(el("li", undefined, `${when(i.time)} · ${i.source || "start"} · ${i.contentSessionId ?? ""} · ${count(i.items.length, "record", "records")}, ${i.bytes} bytes`));
        }
        this.detail.replaceChildren(el("h2", undefined, "The context"), el("pre", "context", ctx.context), section("Given before", past));
    }
    // knowledgeList shows what the project's records add up to, each line
    // with the records it came from and why it is given.
    knowledgeList(k) {
        const ul = el("ul", "reasons knowledge");
        for (const l of k.lines) {
            const li = el("li", undefined, undefined, el("span", `type t-${l.kind}`, l.kind), el("span", undefined, " " + l.text + " "));
            li.title = l.why;
            for (const id of l.ids) {
                const a = el("a", undefined, `#${id} `);
                a.addEventListener("click", () => void this.openRecord(id));
                li.append(a);
            }
            ul.append(li);
        }
        if (!k.lines.length)
            ul.append(el("li", "empty", "Nothing adds up yet."));
        return section(`Project knowledge (derived ${when(k.computed)} from ${count(k.records, "record", "records")})`, ul);
    }
    async status() {
        const r = await api("/api/status");
        const s = r.status;
        const dl = el("dl", "status");
        const add = (k, v) => dl.append(el("dt", undefined, k), el("dd", undefined, v));
        add("Version", s.version);
        add("Data", s.dataDir);
        if (r.storeBytes >= 0)
            add("Memory on disk", size(r.storeBytes));
        if (r.homeBytes >= 0)
            add("Home on disk", `${size(r.homeBytes)} (with the logs, and the model when it is there)`);
        add("Embedder", s.embedder);
        add("Agent", s.agent);
        add("Sessions", String(s.counts.sessions));
        add("Prompts", String(s.counts.prompts));
        add("Observations", String(s.counts.observations));
        add("Summaries", String(s.counts.summaries));
        add("Queued", String(s.counts.queued));
        if (s.notice)
            add("Notice", s.notice);
        this.list.append(el("h2", undefined, "Status"), dl);
        const probs = el("ul", "problems");
        for (const p of r.doctor.problems)
            probs.append(el("li", "error", `${p.check}: ${p.detail}`));
        for (const n of r.doctor.notes ?? [])
            probs.append(el("li", undefined, n));
        if (!probs.childElementCount)
            probs.append(el("li", undefined, "Nothing wrong."));
        this.detail.replaceChildren(el("h2", undefined, "Doctor"), probs);
    }
    // live follows the memory's changes: new records appear at the top of
    // the newest-first list, forgotten ones leave, the queue is shown.
    live() {
        const badge = $("live");
        const es = new EventSource("/api/stream");
        es.addEventListener("open", () => { badge.textContent = "live"; badge.classList.add("on"); });
        es.addEventListener("error", () => { badge.textContent = "reconnecting…"; badge.classList.remove("on"); });
        es.addEventListener("status", (e) => {
            const s = JSON.parse(e.data);
            $("queue").textContent = `${s.counts.observations} records · ${s.counts.queued} queued · ${s.agent}`;
        });
        es.addEventListener("change", (e) => this.change(JSON.parse(e.data)));
    }
    change(c) {
        if (c.kind === "lost") {
            this.show(this.tab);
            return;
        }
        if (c.kind === "forget") {
            for (const id of c.ids ?? [])
                this.removeRecord(id);
            return;
        }
        if (c.project && !this.project.querySelector(`option[value="${CSS.escape(c.project)}"]`)) {
            this.project.append(new Option(c.project, c.project));
        }
        if (c.kind === "observation" && c.id === this.openID && !this.detail.querySelector("form.correct")) {
            void this.openRecord(c.id);
        }
        if (this.tab !== "records" || this.q.value.trim())
            return;
        if ((this.project.value && c.project !== this.project.value) || (this.host.value && c.host !== this.host.value))
            return;
        if (c.kind === "observation" && c.id) {
            if (this.type.value && c.type !== this.type.value)
                return;
            const known = this.rows.find((r) => r.id === c.id);
            if (known) {
                // Corrected or pinned: its row says what it says now.
                const t = known.node.querySelector(".title");
                if (t)
                    t.textContent = c.title ?? "";
                return;
            }
            const row = this.hitRow({ id: c.id, title: c.title ?? "", type: c.type ?? "", project: c.project ?? "", host: c.host, time: c.time, files: [], score: 0, snippet: "" });
            row.node.classList.add("new");
            this.addRow(row, true);
            return;
        }
        if (this.type.value)
            return;
        const text = c.kind === "prompt" ? `prompt ${c.promptNumber}: ${c.title ?? ""}` :
            c.kind === "summary" ? `summary of prompt ${c.promptNumber}: ${c.title ?? ""}` :
                `session ${c.status ?? ""}`;
        const node = el("div", `row activity k-${c.kind} new`, undefined, el("span", "type", c.kind), el("span", "title", text), el("span", "meta", [c.project, c.host, when(c.time), c.contentSessionId].filter(Boolean).join(" · ")));
        const csid = c.contentSessionId ?? "";
        const row = { key: `${c.kind}${c.time}`, node, open: () => void this.openSession(csid) };
        node.addEventListener("click", () => { this.select(this.rows.indexOf(row)); row.open(); });
        this.addRow(row, true);
    }
}
// size is a number of bytes for people: KB under a megabyte, else MB.
function size(bytes) {
    return bytes < 1 << 20 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / (1 << 20)).toFixed(1)} MB`;
}
// count is n and its noun, one for 1 and many otherwise ("1 prompt").
function count(n, one, many) {
    return `${n} ${n === 1 ? one : many}`;
}
// stateBadge marks a record whose code changed or is gone since, or that
// was superseded, undone or marked wrong.
function stateBadge(state) {
    const text = { changed: " changed since", "needs-review": " needs review", gone: " gone", reverted: " reverted", wrong: " marked wrong", superseded: " superseded" };
    if (!state || !text[state])
        return null;
    return el("span", `state s-${state}`, text[state]);
}
// seen says how many times the same fact was seen, and when last ("" when once).
function seen(count, last) {
    return count && count > 1 ? `seen ${count}×, last ${when(last)}` : "";
}
function fill(sel, values, all) {
    const keep = sel.value;
    sel.replaceChildren(new Option(all, ""));
    for (const v of values)
        sel.append(new Option(v, v));
    sel.value = values.includes(keep) ? keep : "";
}
function section(title, body) {
    return el("section", undefined, undefined, el("h3", undefined, title), body);
}
function list(title, items, cls) {
    if (!items || items.length === 0)
        return null;
    const ul = el("ul", cls);
    for (const i of items)
        ul.append(el("li", undefined, i));
    return section(title, ul);
}
function summaryNode(s) {
    const dl = el("dl", "summary");
    const add = (k, v) => { if (v)
        dl.append(el("dt", undefined, k), el("dd", undefined, v)); };
    add("Asked", s.request);
    add("Looked into", s.investigated);
    add("Learned", s.learned);
    add("Done", s.completed);
    add("Next", s.nextSteps);
    add("Notes", s.notes);
    return section("Summary", dl);
}
new Viewer().start();
