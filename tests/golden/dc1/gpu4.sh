# RoCE NIC settings (nr-run)
# eth1 (mlx5_0 port 1)
ip link set dev eth1 mtu 9000
dcb apptrust set dev eth1 order dscp
dcb app flush dev eth1 dscp-prio
dcb app add dev eth1 dscp-prio 26:3 48:6
dcb pfc set dev eth1 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off
echo 0 > /sys/class/net/eth1/ecn/roce_rp/enable/0
echo 0 > /sys/class/net/eth1/ecn/roce_rp/enable/1
echo 0 > /sys/class/net/eth1/ecn/roce_rp/enable/2
echo 1 > /sys/class/net/eth1/ecn/roce_rp/enable/3
echo 0 > /sys/class/net/eth1/ecn/roce_rp/enable/4
echo 0 > /sys/class/net/eth1/ecn/roce_rp/enable/5
echo 0 > /sys/class/net/eth1/ecn/roce_rp/enable/6
echo 0 > /sys/class/net/eth1/ecn/roce_rp/enable/7
echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/0
echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/1
echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/2
echo 1 > /sys/class/net/eth1/ecn/roce_np/enable/3
echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/4
echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/5
echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/6
echo 0 > /sys/class/net/eth1/ecn/roce_np/enable/7
echo 300 > /sys/class/net/eth1/ecn/roce_rp/rpg_time_reset
echo 32767 > /sys/class/net/eth1/ecn/roce_rp/rpg_byte_reset
echo 1 > /sys/class/net/eth1/ecn/roce_rp/rpg_threshold
echo 5 > /sys/class/net/eth1/ecn/roce_rp/rpg_ai_rate
echo 50 > /sys/class/net/eth1/ecn/roce_rp/rpg_hai_rate
echo 11 > /sys/class/net/eth1/ecn/roce_rp/rpg_gd
echo 50 > /sys/class/net/eth1/ecn/roce_rp/rpg_min_dec_fac
echo 1 > /sys/class/net/eth1/ecn/roce_rp/rpg_min_rate
echo 0 > /sys/class/net/eth1/ecn/roce_rp/rate_to_set_on_first_cnp
echo 1019 > /sys/class/net/eth1/ecn/roce_rp/dce_tcp_g
echo 1 > /sys/class/net/eth1/ecn/roce_rp/dce_tcp_rtt
echo 4 > /sys/class/net/eth1/ecn/roce_rp/rate_reduce_monitor_period
echo 1023 > /sys/class/net/eth1/ecn/roce_rp/initial_alpha_value
echo 4 > /sys/class/net/eth1/ecn/roce_np/min_time_between_cnps
echo 48 > /sys/class/net/eth1/ecn/roce_np/cnp_dscp
echo 6 > /sys/class/net/eth1/ecn/roce_np/cnp_802p_prio
mkdir -p /sys/kernel/config/rdma_cm/mlx5_0
echo 106 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos
# eth2 (mlx5_1 port 1)
ip link set dev eth2 mtu 9000
dcb apptrust set dev eth2 order dscp
dcb app flush dev eth2 dscp-prio
dcb app add dev eth2 dscp-prio 26:3 48:6
dcb pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off
echo 0 > /sys/class/net/eth2/ecn/roce_rp/enable/0
echo 0 > /sys/class/net/eth2/ecn/roce_rp/enable/1
echo 0 > /sys/class/net/eth2/ecn/roce_rp/enable/2
echo 1 > /sys/class/net/eth2/ecn/roce_rp/enable/3
echo 0 > /sys/class/net/eth2/ecn/roce_rp/enable/4
echo 0 > /sys/class/net/eth2/ecn/roce_rp/enable/5
echo 0 > /sys/class/net/eth2/ecn/roce_rp/enable/6
echo 0 > /sys/class/net/eth2/ecn/roce_rp/enable/7
echo 0 > /sys/class/net/eth2/ecn/roce_np/enable/0
echo 0 > /sys/class/net/eth2/ecn/roce_np/enable/1
echo 0 > /sys/class/net/eth2/ecn/roce_np/enable/2
echo 1 > /sys/class/net/eth2/ecn/roce_np/enable/3
echo 0 > /sys/class/net/eth2/ecn/roce_np/enable/4
echo 0 > /sys/class/net/eth2/ecn/roce_np/enable/5
echo 0 > /sys/class/net/eth2/ecn/roce_np/enable/6
echo 0 > /sys/class/net/eth2/ecn/roce_np/enable/7
echo 300 > /sys/class/net/eth2/ecn/roce_rp/rpg_time_reset
echo 32767 > /sys/class/net/eth2/ecn/roce_rp/rpg_byte_reset
echo 1 > /sys/class/net/eth2/ecn/roce_rp/rpg_threshold
echo 5 > /sys/class/net/eth2/ecn/roce_rp/rpg_ai_rate
echo 50 > /sys/class/net/eth2/ecn/roce_rp/rpg_hai_rate
echo 11 > /sys/class/net/eth2/ecn/roce_rp/rpg_gd
echo 50 > /sys/class/net/eth2/ecn/roce_rp/rpg_min_dec_fac
echo 1 > /sys/class/net/eth2/ecn/roce_rp/rpg_min_rate
echo 0 > /sys/class/net/eth2/ecn/roce_rp/rate_to_set_on_first_cnp
echo 1019 > /sys/class/net/eth2/ecn/roce_rp/dce_tcp_g
echo 1 > /sys/class/net/eth2/ecn/roce_rp/dce_tcp_rtt
echo 4 > /sys/class/net/eth2/ecn/roce_rp/rate_reduce_monitor_period
echo 1023 > /sys/class/net/eth2/ecn/roce_rp/initial_alpha_value
echo 4 > /sys/class/net/eth2/ecn/roce_np/min_time_between_cnps
echo 48 > /sys/class/net/eth2/ecn/roce_np/cnp_dscp
echo 6 > /sys/class/net/eth2/ecn/roce_np/cnp_802p_prio
mkdir -p /sys/kernel/config/rdma_cm/mlx5_1
echo 106 > /sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos
