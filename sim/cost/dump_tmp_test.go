package cost
import ("testing";"fmt")
func TestDumpTmp(t *testing.T){
	for _, c := range []struct{m,g string; tp, n, ctx int}{{"llama-3.1-8b","h100-sxm-80gb",1,1,1000},{"llama-3.1-8b","a100-80gb",1,1,1000},{"llama-3.3-70b","a100-40gb",8,4,1000},{"llama-3.3-70b","h100-sxm-80gb",4,1,1000},{"llama-3.1-8b","h100-sxm-80gb",1,64,1000}}{
		m,_:=LookupModel(c.m); g,_:=LookupGPU(c.g)
		r,err:=NewRoofline(m,g,c.tp,DefaultRoofline()); if err!=nil{t.Fatal(err)}
		var b Batch; for range c.n {b.AddDecode(c.ctx)}
		p:=r.Breakdown(&b)
		fmt.Printf("%s %s tp%d n=%d: total %.2f ms lin %.2f attn %.2f ew %.2f ar %.2f ovh %.2f; weights/bw %.2f\n", c.m,c.g,c.tp,c.n,p.TotalNS()/1e6,p.LinearNS/1e6,p.AttentionNS/1e6,p.ElementwiseNS/1e6,p.AllReduceNS/1e6,p.OverheadNS/1e6, float64(m.WeightBytes())/float64(c.tp)/g.MemBandwidth*1e3)
	}
}
