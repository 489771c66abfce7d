package vector_test

import (
	"context"
	"encoding/gob"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/vector"
)

func embedCached(t *testing.T, e vector.Embedder, name string, texts []string) [][]float32 {
	path := "/tmp/evalcache-" + e.ID() + "-" + name + ".gob"
	var out [][]float32
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		if gob.NewDecoder(f).Decode(&out) == nil && len(out) == len(texts) {
			return out
		}
	}
	out = make([][]float32, len(texts))
	done := make(chan int)
	for w := 0; w < 2; w++ {
		go func(w int) {
			for i := w; i < len(texts); i += 2 {
				v, err := e.Embed(context.Background(), texts[i])
				if err != nil {
					v = make([]float32, e.Dim())
				}
				out[i] = v
			}
			done <- 1
		}(w)
	}
	<-done
	<-done
	f, _ := os.Create(path)
	gob.NewEncoder(f).Encode(out)
	f.Close()
	return out
}

func dotf(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func meanVec(vs [][]float32) []float32 {
	out := make([]float32, len(vs[0]))
	for _, v := range vs {
		for i := range v {
			out[i] += v[i]
		}
	}
	var ss float64
	for _, x := range out {
		ss += float64(x) * float64(x)
	}
	r := float32(1 / math.Sqrt(ss))
	for i := range out {
		out[i] *= r
	}
	return out
}

type rankFn func(q evalQuery, qi int) []uint64

func evalRank(s *evalSet, f rankFn) (r5, mrr float64, byKind map[string]float64) {
	byKind = map[string]float64{}
	cnt := map[string]int{}
	for qi, q := range s.queries {
		rel := map[uint64]bool{}
		for _, r := range q.Relevant {
			rel[s.ids[r]] = true
		}
		ranked := f(q, qi)
		first := 0
		var rr float64
		for i, id := range ranked {
			if rel[id] {
				if first == 0 {
					first = i + 1
				}
				if i < 5 {
					rr += 1 / float64(len(rel))
				}
			}
		}
		r5 += rr
		if first > 0 {
			mrr += 1 / float64(first)
		}
		byKind[q.Kind] += rr
		cnt[q.Kind]++
	}
	for k := range byKind {
		byKind[k] /= float64(cnt[k])
	}
	n := float64(len(s.queries))
	return r5 / n, mrr / n, byKind
}

func TestScratchStrategies(t *testing.T) {
	s := loadEvalSet(t, "testdata/eval")
	use := openUSELite(t)
	hash := vector.NewHashEmbedder()
	var qtexts []string
	for _, q := range s.queries {
		qtexts = append(qtexts, q.Query)
	}
	qUSE := embedCached(t, use, "queries", qtexts)
	qHash := embedCached(t, hash, "queries", qtexts)

	var whole, noFiles, titleSub []string
	var lines []string
	var lineOwner []int
	for i, d := range s.docs {
		o := s.obs[i]
		whole = append(whole, d.Title+"\n"+d.Text+"\n"+strings.Join(d.Files, "\n"))
		noFiles = append(noFiles, d.Title+"\n"+d.Text)
		titleSub = append(titleSub, o.Title+". "+o.Subtitle)
		ls := []string{o.Title, o.Subtitle}
		ls = append(ls, o.Facts...)
		ls = append(ls, o.Narrative)
		for _, l := range ls {
			lines = append(lines, l)
			lineOwner = append(lineOwner, i)
		}
	}
	dWhole := embedCached(t, use, "whole", whole)
	dNoFiles := embedCached(t, use, "nofiles", noFiles)
	dTitleSub := embedCached(t, use, "titlesub", titleSub)
	dLines := embedCached(t, use, "lines", lines)
	hWhole := embedCached(t, hash, "whole", whole)
	perDoc := make([][][]float32, len(s.docs))
	for li, o := range lineOwner {
		perDoc[o] = append(perDoc[o], dLines[li])
	}
	dMean := make([][]float32, len(s.docs))
	dMeanTS := make([][]float32, len(s.docs))
	for i := range perDoc {
		dMean[i] = meanVec(perDoc[i])
		dMeanTS[i] = meanVec([][]float32{dMean[i], dTitleSub[i]})
	}

	dMean3 := make([][]float32, len(s.docs))
	dMeanW := make([][]float32, len(s.docs))
	dTSW := make([][]float32, len(s.docs))
	for i := range perDoc {
		dMean3[i] = meanVec([][]float32{dMean[i], dTitleSub[i], dNoFiles[i]})
		dMeanW[i] = meanVec([][]float32{dMean[i], dNoFiles[i]})
		dTSW[i] = meanVec([][]float32{dTitleSub[i], dNoFiles[i]})
	}
	vecRank := func(score func(qi, di int) float64) rankFn {
		return func(q evalQuery, qi int) []uint64 {
			type sc struct {
				id uint64
				s  float64
			}
			var all []sc
			for di, d := range s.docs {
				if q.Project != "" && d.Project != q.Project {
					continue
				}
				all = append(all, sc{d.ID, score(qi, di)})
			}
			sort.SliceStable(all, func(a, b int) bool { return all[a].s > all[b].s })
			var out []uint64
			for _, x := range all[:min(100, len(all))] {
				out = append(out, x.id)
			}
			return out
		}
	}
	single := func(dv [][]float32, qv [][]float32) rankFn {
		return vecRank(func(qi, di int) float64 { return dotf(qv[qi], dv[di]) })
	}
	strategies := map[string]rankFn{
		"whole":     single(dWhole, qUSE),
		"nofiles":   single(dNoFiles, qUSE),
		"titlesub":  single(dTitleSub, qUSE),
		"mean":      single(dMean, qUSE),
		"mean+ts":   single(dMeanTS, qUSE),
		"hash":      single(hWhole, qHash),
		"mean3":     single(dMean3, qUSE),
		"mean+w":    single(dMeanW, qUSE),
		"ts+w":      single(dTSW, qUSE),
		"maxlines": vecRank(func(qi, di int) float64 {
			b := -1.0
			for _, v := range perDoc[di] {
				b = max(b, dotf(qUSE[qi], v))
			}
			return b
		}),
		"mean+0.15hash": vecRank(func(qi, di int) float64 { return 0.85*dotf(qUSE[qi], dMean[di]) + 0.15*dotf(qHash[qi], hWhole[di]) }),
		"whole+0.15hash": vecRank(func(qi, di int) float64 { return 0.85*dotf(qUSE[qi], dWhole[di]) + 0.15*dotf(qHash[qi], hWhole[di]) }),
	}
	// keyword ranking from the index
	ix := vector.NewIndex(hash)
	docs := slices.Clone(s.docs)
	if err := ix.Add(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	kwCache := map[int][]uint64{}
	kw := func(q evalQuery, qi int) []uint64 {
		if r, ok := kwCache[qi]; ok {
			return r
		}
		hits, _ := ix.Search(context.Background(), vector.Query{Text: q.Query, Project: q.Project, Limit: 100, Mode: vector.Keyword})
		var out []uint64
		for _, h := range hits {
			out = append(out, h.ID)
		}
		kwCache[qi] = out
		return out
	}
	strategies["keyword"] = kw
	names := []string{}
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r5, mrr, bk := evalRank(s, strategies[n])
		t.Logf("%-16s R@5 %.3f MRR %.3f  para %.3f ident %.3f path %.3f err %.3f", n, r5, mrr, bk["paraphrase"], bk["identifier"], bk["path"], bk["error"])
	}
	rrf := func(a, b rankFn, k float64, wa, wb float64) rankFn {
		return func(q evalQuery, qi int) []uint64 {
			sc := map[uint64]float64{}
			for i, id := range a(q, qi) {
				sc[id] += wa / (k + float64(i+1))
			}
			for i, id := range b(q, qi) {
				sc[id] += wb / (k + float64(i+1))
			}
			var ids []uint64
			for id := range sc {
				ids = append(ids, id)
			}
			sort.Slice(ids, func(x, y int) bool {
				if sc[ids[x]] != sc[ids[y]] {
					return sc[ids[x]] > sc[ids[y]]
				}
				return ids[x] < ids[y]
			})
			return ids
		}
	}
	// keyword coverage of the top keyword hit
	df := map[string]int{}
	docTerms := make([]map[string]bool, len(s.docs))
	for i, d := range s.docs {
		docTerms[i] = map[string]bool{}
		for _, tm := range vector.Terms(d.Title + "\n" + d.Text + "\n" + strings.Join(d.Files, "\n")) {
			docTerms[i][tm] = true
		}
		for tm := range docTerms[i] {
			df[tm]++
		}
	}
	N := float64(len(s.docs))
	idf := func(tm string) float64 { return math.Log(1 + (N-float64(df[tm])+0.5)/(float64(df[tm])+0.5)) }
	coverage := func(q evalQuery, qi int) float64 {
		top := kw(q, qi)
		if len(top) == 0 {
			return 0
		}
		dt := docTerms[top[0]-1]
		var have, all float64
		seen := map[string]bool{}
		for _, tm := range vector.Terms(q.Query) {
			if seen[tm] {
				continue
			}
			seen[tm] = true
			all += idf(tm)
			if dt[tm] {
				have += idf(tm)
			}
		}
		if all == 0 {
			return 0
		}
		return have / all
	}
	for qi, q := range s.queries {
		if qi%3 == 0 {
			t.Logf("coverage %-10s %.2f %q", q.Kind, coverage(q, qi), q.Query)
		}
	}
	adaptive := func(a, b rankFn, k, lo, hi, pow float64) rankFn {
		return func(q evalQuery, qi int) []uint64 {
			c := coverage(q, qi)
			w := lo + (hi-lo)*math.Pow(c, pow)
			return rrf(a, b, k, w, 1)(q, qi)
		}
	}
	for _, vn := range []string{"mean+w"} {
		for _, k := range []float64{5, 10, 20} {
			for _, lh := range [][3]float64{{0.3, 3, 2}, {0.1, 3, 2}, {0, 3, 2}, {0, 3, 1}, {0.1, 3, 1}, {0, 4, 2}, {0, 2, 1}} {
				r5, mrr, bk := evalRank(s, adaptive(kw, strategies[vn], k, lh[0], lh[1], lh[2]))
				t.Logf("adapt kw+%-14s k=%2.0f lo=%.1f hi=%.1f pow=%.0f: R@5 %.3f MRR %.3f  para %.3f ident %.3f path %.3f err %.3f", vn, k, lh[0], lh[1], lh[2], r5, mrr, bk["paraphrase"], bk["identifier"], bk["path"], bk["error"])
			}
		}
	}
	best := adaptive(kw, strategies["mean+w"], 5, 0.5, 3, 2)
	dv := dMeanW
	prf := func(src rankFn, m int, beta float64) rankFn {
		return func(q evalQuery, qi int) []uint64 {
			top := src(q, qi)
			qv := make([]float32, len(qUSE[qi]))
			copy(qv, qUSE[qi])
			for _, id := range top[:min(m, len(top))] {
				for i, x := range dv[id-1] {
					qv[i] += float32(beta/float64(m)) * x
				}
			}
			return vecRank(func(_, di int) float64 { return dotf(qv, dv[di]) })(q, qi)
		}
	}
	for _, m := range []int{} {
		for _, beta := range []float64{0.3, 0.6, 1.0} {
			v := prf(strategies["mean+w"], m, beta)
			r5, mrr, bk := evalRank(s, v)
			t.Logf("prf-vec m=%d beta=%.1f: R@5 %.3f MRR %.3f para %.3f", m, beta, r5, mrr, bk["paraphrase"])
			r5, mrr, bk = evalRank(s, adaptive(kw, v, 5, 0.5, 3, 2))
			t.Logf("prf-vec-hybrid m=%d beta=%.1f: R@5 %.3f MRR %.3f para %.3f ident %.3f path %.3f err %.3f", m, beta, r5, mrr, bk["paraphrase"], bk["identifier"], bk["path"], bk["error"])
			v2 := prf(best, m, beta)
			r5, mrr, bk = evalRank(s, adaptive(kw, v2, 5, 0.5, 3, 2))
			t.Logf("prf-hyb-hybrid m=%d beta=%.1f: R@5 %.3f MRR %.3f para %.3f ident %.3f path %.3f err %.3f", m, beta, r5, mrr, bk["paraphrase"], bk["identifier"], bk["path"], bk["error"])
		}
	}
	for qi, q := range s.queries {
		if q.Kind != "paraphrase" {
			continue
		}
		rank := func(f rankFn) string {
			var out []string
			r := f(q, qi)
			for _, id := range q.Relevant {
				out = append(out, fmt.Sprint(slices.Index(r, s.ids[id])+1))
			}
			return strings.Join(out, ",")
		}
		t.Logf("para %-80q best=%s vec=%s whole=%s kw=%s cov=%.2f", q.Query, rank(best), rank(strategies["mean+w"]), rank(strategies["whole"]), rank(kw), coverage(q, qi))
	}
}
