package store

import (
	"context"
	"encoding/binary"

	"github.com/dgraph-io/badger/v4"

	"github.com/mnemo-dev/mnemo/memory"
)

// Records returns a page of full observations in the order of their
// ids, from the first after p.After, of one project or of all: a reader
// that goes through the whole memory (`mnemo eval`) asks again from
// Next until it is 0. It reads and changes nothing else.
func (m *Memory) Records(ctx context.Context, p memory.RecordsParams) (memory.RecordsResult, error) {
	if err := p.Validate(); err != nil {
		return memory.RecordsResult{}, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = memory.DefaultLimit
	}
	res := memory.RecordsResult{Observations: []memory.Observation{}}
	err := m.store.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: pObs, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Seek(idKey(pObs, p.After+1)); it.ValidForPrefix(pObs); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(res.Observations) == limit {
				k := it.Item().Key()
				res.Next = binary.BigEndian.Uint64(k[len(pObs):]) - 1
				return nil
			}
			var o memory.Observation
			if err := it.Item().Value(func(b []byte) error { return unmarshalValue(b, &o) }); err != nil {
				return err
			}
			if p.Project != "" && o.Project != p.Project {
				continue
			}
			res.Observations = append(res.Observations, o)
		}
		return nil
	})
	m.withStates(res.Observations)
	return res, err
}
