/**
 * Presets: the gallery (/presets), one preset (/presets/:id), create (/presets/new) and edit
 * (/presets/:id/edit). Paths are relative to the area (wouter nest).
 */
import { Route, Switch } from 'wouter';
import { Detail } from './detail';
import { Editor } from './editor';
import { Gallery } from './gallery';
import './presets.css';

export default function PresetsArea() {
  return (
    <Switch>
      <Route path="/new">
        <Editor id={null} />
      </Route>
      <Route path="/:id/edit">{(params) => <Editor key={params.id} id={params.id} />}</Route>
      <Route path="/:id">{(params) => <Detail key={params.id} id={params.id} />}</Route>
      <Route>
        <Gallery />
      </Route>
    </Switch>
  );
}
