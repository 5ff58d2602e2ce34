// Probe prints, every INTERVAL_MS, each broker JVM's request metrics by
// request type (kafka.network:type=RequestMetrics) and the process's CPU
// ticks, for reports/bench-requests. It attaches to the JVMs as jcmd
// does (the same user), and ends when a broker does.
//
// Usage: java Probe.java INTERVAL_MS PID...
//
// Each snapshot is "time MILLIS pid PID", then one line per request type:
// "TYPE COUNT local=MS total=MS bytes=B send=MS queue=MS remote=MS" (the
// histograms' count times mean: the handler's local time, the whole
// request time, the request bytes, the response send, request queue and
// remote times, summed since the broker started), and "proc TICKS" (user
// and system CPU in clock ticks, /proc/PID/stat).
import com.sun.tools.attach.VirtualMachine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

public class Probe {
    static final String[] HISTOGRAMS = {"LocalTimeMs", "TotalTimeMs", "RequestBytes", "ResponseSendTimeMs", "RequestQueueTimeMs", "RemoteTimeMs"};
    static final String[] LABELS = {"local", "total", "bytes", "send", "queue", "remote"};

    public static void main(String[] args) throws Exception {
        long every = Long.parseLong(args[0]);
        Map<String, MBeanServerConnection> conns = new LinkedHashMap<>();
        for (String pid : Arrays.asList(args).subList(1, args.length)) {
            VirtualMachine vm = VirtualMachine.attach(pid);
            String addr = vm.startLocalManagementAgent();
            vm.detach();
            conns.put(pid, JMXConnectorFactory.connect(new JMXServiceURL(addr)).getMBeanServerConnection());
        }
        while (true) {
            for (var e : conns.entrySet()) {
                snapshot(e.getKey(), e.getValue());
            }
            System.out.flush();
            Thread.sleep(every);
        }
    }

    static void snapshot(String pid, MBeanServerConnection s) throws Exception {
        TreeMap<String, double[]> byType = new TreeMap<>();
        for (int i = 0; i < HISTOGRAMS.length; i++) {
            for (ObjectName on : s.queryNames(new ObjectName("kafka.network:type=RequestMetrics,name=" + HISTOGRAMS[i] + ",*"), null)) {
                long count = ((Number) s.getAttribute(on, "Count")).longValue();
                double mean = ((Number) s.getAttribute(on, "Mean")).doubleValue();
                double[] v = byType.computeIfAbsent(on.getKeyProperty("request"), k -> new double[1 + HISTOGRAMS.length]);
                if (i == 0) {
                    v[0] = count;
                }
                v[1 + i] = count * mean;
            }
        }
        System.out.println("time " + System.currentTimeMillis() + " pid " + pid);
        for (var e : byType.entrySet()) {
            double[] v = e.getValue();
            if (v[0] == 0) {
                continue;
            }
            StringBuilder b = new StringBuilder(e.getKey()).append(String.format(" %.0f", v[0]));
            for (int i = 0; i < LABELS.length; i++) {
                b.append(String.format(" %s=%.0f", LABELS[i], v[1 + i]));
            }
            System.out.println(b);
        }
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        System.out.println("proc " + (Long.parseLong(f[11]) + Long.parseLong(f[12])));
    }
}
