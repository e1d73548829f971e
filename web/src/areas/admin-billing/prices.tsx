/** Prices: the default price and each model's (set, edit, delete). */
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client';
import { common } from '../../i18n/common';
import { useFormat, useT } from '../../i18n/context';
import { ErrorNote, Field, Loading, TableState } from '../../ui/kit';
import { useAction, useApi } from '../../ui/use-api';
import type { Pricing } from './data';
import { messages } from './messages';
import { confirmed } from './tabs';

interface PriceForm {
  input_price: string;
  output_price: string;
  per_request_price: string;
}

function PriceFields({ form, set }: { form: PriceForm; set: (f: PriceForm) => void }) {
  const t = useT(messages);
  return (
    <>
      <Field label={t('inputPrice')}>{(id) => <input id={id} inputMode="decimal" required value={form.input_price} onChange={(e) => set({ ...form, input_price: e.target.value })} />}</Field>
      <Field label={t('outputPrice')}>{(id) => <input id={id} inputMode="decimal" required value={form.output_price} onChange={(e) => set({ ...form, output_price: e.target.value })} />}</Field>
      <Field label={t('requestPrice')}>{(id) => <input id={id} inputMode="decimal" value={form.per_request_price} onChange={(e) => set({ ...form, per_request_price: e.target.value })} />}</Field>
    </>
  );
}

const bodyOf = (f: PriceForm) => ({ input_price: f.input_price.trim(), output_price: f.output_price.trim(), per_request_price: f.per_request_price.trim() || '0' });

export function PricesPage() {
  const t = useT(messages);
  const c = useT(common);
  const { dateTime } = useFormat();
  const pricing = useApi<Pricing>('/v1/admin/pricing');
  const [def, setDef] = useState<PriceForm | null>(null);
  const [model, setModel] = useState('');
  const [price, setPrice] = useState<PriceForm>({ input_price: '', output_price: '', per_request_price: '' });
  const saveDefault = useAction((body: PriceForm) => api<Pricing>('/v1/admin/pricing/default', { method: 'PUT', body: bodyOf(body) }));
  const saveModel = useAction((name: string, body: PriceForm) => api<Pricing>('/v1/admin/pricing/models', { method: 'POST', body: { model: name, ...bodyOf(body) } }));
  const remove = useAction((name: string) => api<Pricing>(`/v1/admin/pricing/models/${encodeURIComponent(name)}`, { method: 'DELETE' }));

  if (!pricing.data) return pricing.error ? <ErrorNote error={pricing.error} onRetry={() => void pricing.reload()} /> : <Loading />;
  const data = pricing.data;
  const defForm = def ?? { input_price: data.default.input_price, output_price: data.default.output_price, per_request_price: data.default.per_request_price };

  const submitDefault = async (e: FormEvent) => {
    e.preventDefault();
    const next = await saveDefault.run(defForm);
    if (next) {
      pricing.set(next);
      setDef(null);
    }
  };
  const submitModel = async (e: FormEvent) => {
    e.preventDefault();
    const next = await saveModel.run(model.trim(), price);
    if (next) {
      pricing.set(next);
      setModel('');
      setPrice({ input_price: '', output_price: '', per_request_price: '' });
    }
  };
  const del = async (name: string) => {
    if (!confirmed(t('confirmDeletePrice', { model: name }))) return;
    const next = await remove.run(name);
    if (next) pricing.set(next);
  };

  return (
    <>
      <p className="muted">{t('unitNote')}</p>
      <section className="ops-section card" aria-labelledby="default-price">
        <h2 id="default-price">{t('defaultPrice')}</h2>
        <p className="muted">{t('defaultHint')}</p>
        <form onSubmit={(e) => void submitDefault(e)} aria-label={t('defaultPrice')}>
          <div className="form-row">
            <PriceFields form={defForm} set={setDef} />
          </div>
          <ErrorNote error={saveDefault.error} />
          <div className="form-actions">
            <button type="submit" disabled={saveDefault.busy}>
              {t('saveDefault')}
            </button>
          </div>
        </form>
      </section>
      <section className="ops-section" aria-labelledby="model-prices">
        <h2 id="model-prices">{t('modelPrices')}</h2>
        <form className="card" onSubmit={(e) => void submitModel(e)} aria-label={t('addModelPrice')}>
          <div className="form-row">
            <Field label={t('model')}>{(id) => <input id={id} required value={model} onChange={(e) => setModel(e.target.value)} />}</Field>
            <PriceFields form={price} set={setPrice} />
          </div>
          <ErrorNote error={saveModel.error} />
          <div className="form-actions">
            <button type="submit" disabled={saveModel.busy}>
              {t('saveModelPrice')}
            </button>
          </div>
        </form>
        <ErrorNote error={remove.error} />
        <TableState
          rows={data.models}
          table={(rows) => (
            <table>
              <thead>
                <tr>
                  <th>{t('model')}</th>
                  <th className="num">{t('input')}</th>
                  <th className="num">{t('output')}</th>
                  <th className="num">{t('perRequest')}</th>
                  <th>{t('updated')}</th>
                  <th>{c('actions')}</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((m) => (
                  <tr key={m.model}>
                    <td>
                      <code>{m.model}</code>
                    </td>
                    <td className="num">{m.input_price}</td>
                    <td className="num">{m.output_price}</td>
                    <td className="num">{m.per_request_price}</td>
                    <td className="nowrap">{dateTime(m.updated_at)}</td>
                    <td className="row">
                      <button
                        type="button"
                        className="secondary"
                        aria-label={t('editPrice', { model: m.model })}
                        onClick={() => {
                          setModel(m.model);
                          setPrice({ input_price: m.input_price, output_price: m.output_price, per_request_price: m.per_request_price });
                        }}
                      >
                        {c('edit')}
                      </button>
                      <button type="button" className="danger" aria-label={t('deletePrice', { model: m.model })} onClick={() => void del(m.model)}>
                        {c('delete')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        />
      </section>
    </>
  );
}
