// widget.js: the notebook front end of cctool.widget (an anywidget ES module). The page runs
// in a sandboxed frame, as cctool.show's does, so that its ids, styles and scripts stay out of
// the notebook; bridge.js inside it and this module relay the selection both ways through
// the model's `selected` (node ids), and the notes through `annotations` ({node, note}).
function render({ model, el }) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-downloads");
  frame.setAttribute("title", "calling context tree");
  frame.style.cssText = `width:100%;height:${Number(model.get("_height")) || 640}px;border:1px solid #ccc`;
  const send = () => {
    if (frame.contentWindow) frame.contentWindow.postMessage({ cctool: "select", ids: model.get("selected") || [] }, "*");
  };
  const sendNotes = () => {
    if (frame.contentWindow) frame.contentWindow.postMessage({ cctool: "annotations", list: model.get("annotations") || [] }, "*");
  };
  const onMessage = (e) => {
    if (e.source !== frame.contentWindow || !e.data || typeof e.data !== "object") return;
    if (e.data.cctool === "ready") { send(); sendNotes(); }
    else if (e.data.cctool === "annotations" && Array.isArray(e.data.list)) {
      model.set("annotations", e.data.list.filter((a) => a && Number.isInteger(a.node) && typeof a.note === "string"));
      model.save_changes();
    }
    else if (e.data.cctool === "selected" && Array.isArray(e.data.ids)) {
      model.set("selected", e.data.ids.filter((i) => Number.isInteger(i)));
      model.save_changes();
    }
  };
  const reload = () => { frame.srcdoc = model.get("_page"); };
  window.addEventListener("message", onMessage);
  model.on("change:selected", send);
  model.on("change:annotations", sendNotes);
  model.on("change:_page", reload);
  reload();
  el.appendChild(frame);
  return () => {
    window.removeEventListener("message", onMessage);
    model.off("change:selected", send);
    model.off("change:annotations", sendNotes);
    model.off("change:_page", reload);
  };
}

export default { render };
